// What one copy out of a sandbox may cost the host, shared by both sandboxes (the namespace's
// tree copy and the container's archive reader): a byte budget counted in bytes really written,
// holes for runs of zeros (a sparse file stays sparse), links only when they stay inside the
// copied tree, and one record of everything that was cut or left out, next to the copy.
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { readJsonIfExists, writeJsonAtomic } from "../util/fs.js";

/** The record's name: inside a copied folder, or after a copied file's name (`out.txt.benchflow-truncated.json`). */
export const CUT_RECORD = ".benchflow-truncated.json";
/**
 * Each folder, link and file costs one file system block besides its data (what it really takes
 * on the host), so a million empty files cannot pass.
 */
export const ENTRY_COST = 4096;
/** The most cuts listed one by one; the rest are counted. */
const MAX_LISTED = 1000;
/** Zero runs are found per block of this size (a file system block). */
const BLOCK = 4096;
/** Data is examined in regions of this size, aligned in the file. */
const REGION = 256 * 1024;
const ZEROS = Buffer.alloc(REGION);

export type CutReason =
  /** A file cut at the budget: `kept_bytes` of `size` came out. */
  | "over_budget"
  /** Left out: the budget was spent before it. */
  | "budget_spent"
  /** The copy stopped reading: more apparent size (zeros included) than it reads in one download. */
  | "scan_limit"
  /** A symlink that is absolute or resolves outside the copied tree. */
  | "link_escapes"
  /** A tar hard link to something that is not a file of the same archive. */
  | "hardlink_outside"
  /** A fifo, socket or device. */
  | "special_file"
  /** A tar entry named outside the destination (`..`, another top) or beneath a symlink. */
  | "unsafe_path"
  /** A name ending in `.benchflow-truncated.json`: only the copy writes its record. */
  | "reserved_name"
  /** A tar entry type we do not unpack (GNU sparse, ...), or one that clashes with an earlier entry. */
  | "unsupported";

export interface Cut {
  /** Inside the copied tree, "/"-separated; "" is the copied file or folder itself (unsafe_path: the archive's name). */
  path: string;
  reason: CutReason;
  /** The entry's size as the sandbox had it. */
  size?: number;
  kept_bytes?: number;
  /** A dropped link's target. */
  target?: string;
}

/** One record per download that cut something; the record file holds a list of them. */
export interface CutRecord {
  source: string;
  max_bytes: number;
  bytes_written: number;
  cut: Cut[];
  /** Cuts beyond the first 1000, counted. */
  cut_not_listed: number;
}

/** The budget and the record of one download. */
export class CopyOut {
  written = 0;
  scanned = 0;
  readonly maxScan: number;
  private readonly cuts: Cut[] = [];
  private unlisted = 0;

  constructor(
    readonly source: string,
    readonly maxBytes: number,
    /** Apparent bytes (zeros included) one download reads at most; tests make it small. */
    maxScan?: number,
  ) {
    if (!Number.isFinite(maxBytes) || maxBytes < 0) {
      throw new Error(`download of ${source}: maxBytes must be a number of bytes >= 0, not ${maxBytes}`);
    }
    // Zeros cost nothing on the host but take time to read (the engines send them; Node cannot
    // seek to data): bounded too.
    this.maxScan = maxScan ?? Math.max(4 * 1024 ** 3, 8 * maxBytes);
  }

  left(): number {
    return Math.max(0, this.maxBytes - this.written);
  }

  cut(c: Cut): void {
    if (this.cuts.length < MAX_LISTED) this.cuts.push(c);
    else this.unlisted++;
  }

  /** Charge one entry before it is written; false (and recorded) when nothing more may come out. */
  admit(rel: string, size?: number): boolean {
    if (this.scanned >= this.maxScan) this.cut({ path: rel, reason: "scan_limit", size });
    else if (this.left() < ENTRY_COST) this.cut({ path: rel, reason: "budget_spent", size });
    else {
      this.written += ENTRY_COST;
      return true;
    }
    return false;
  }

  /** Whether a name is one the copy keeps for its record (never copied out of a sandbox). */
  reserved(rel: string, name: string): boolean {
    if (!name.endsWith(CUT_RECORD)) return false;
    this.cut({ path: rel, reason: "reserved_name" });
    return true;
  }

  /** Write what was cut next to the copy at hostPath (nothing when nothing was). */
  async finish(hostPath: string): Promise<CutRecord | null> {
    if (this.cuts.length === 0 && this.unlisted === 0) return null;
    const st = await fs.lstat(hostPath).catch(() => null);
    const file = st?.isDirectory() ? path.join(hostPath, CUT_RECORD) : `${hostPath}${CUT_RECORD}`;
    const record: CutRecord = {
      source: this.source,
      max_bytes: this.maxBytes,
      bytes_written: this.written,
      cut: this.cuts,
      cut_not_listed: this.unlisted,
    };
    // Two downloads may land in one folder (artifacts/): the record keeps both.
    const earlier = await readJsonIfExists<CutRecord[]>(file).catch(() => undefined);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeJsonAtomic(file, [...(Array.isArray(earlier) ? earlier : []), record]);
    return record;
  }
}

/**
 * Writes one file from its bytes in order: regions of zeros become holes (never written, never
 * counted), the rest is counted against the budget and cut where the budget ends. The apparent
 * size is kept with ftruncate.
 */
export class SparseFile {
  private pos = 0;
  private fill = 0;
  private writtenTo = 0;
  private stoppedAt: number | null = null;
  /** Made on the first write, as small as the file (most logs are a few KiB), up to one region. */
  private stage: Buffer | null = null;

  private constructor(
    private readonly fh: fs.FileHandle,
    private readonly out: CopyOut,
    private readonly sizeHint: number,
  ) {}

  /** A new file at dest; whatever was there goes first, and the open never follows a link. */
  static async create(dest: string, mode: number, out: CopyOut, sizeHint = REGION): Promise<SparseFile> {
    await fs.rm(dest, { force: true, recursive: true });
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    return new SparseFile(await fs.open(dest, flags, mode & 0o777), out, sizeHint);
  }

  /** True once the budget ended inside this file: the rest need not be read. */
  get stopped(): boolean {
    return this.stoppedAt !== null;
  }

  async write(chunk: Buffer): Promise<void> {
    let off = 0;
    while (off < chunk.length && !this.stopped) {
      // A whole aligned region in the caller's buffer is examined where it lies (no copy).
      if (this.fill === 0 && chunk.length - off >= REGION) {
        await this.region(chunk.subarray(off, off + REGION));
        off += REGION;
        continue;
      }
      const n = Math.min(REGION - this.fill, chunk.length - off);
      const stage = this.stageFor(this.fill + n);
      chunk.copy(stage, this.fill, off, off + n);
      this.fill += n;
      off += n;
      if (this.fill === REGION) {
        await this.region(stage);
        this.fill = 0;
      }
    }
  }

  private stageFor(bytes: number): Buffer {
    if (this.stage && this.stage.length >= bytes) return this.stage;
    const grown = Buffer.allocUnsafe(
      Math.min(REGION, Math.max(bytes, 2 * (this.stage?.length ?? 0), this.sizeHint, BLOCK)),
    );
    this.stage?.copy(grown, 0, 0, this.fill);
    this.stage = grown;
    return grown;
  }

  /** Flush, keep the apparent size (or the size at the cut), close. Returns the size kept. */
  async close(): Promise<number> {
    try {
      if (this.stage && this.fill > 0 && !this.stopped) await this.region(this.stage.subarray(0, this.fill));
      this.fill = 0;
      const size = this.stoppedAt ?? this.pos;
      if (size > this.writtenTo) await this.fh.truncate(size);
      return size;
    } finally {
      await this.fh.close();
    }
  }

  private async region(data: Buffer): Promise<void> {
    const at = this.pos;
    this.pos += data.length;
    if (data.equals(ZEROS.subarray(0, data.length))) return;
    // Runs of non-zero blocks are written in one call each; the blocks between stay holes.
    let run = -1;
    for (let i = 0; i < data.length; i += BLOCK) {
      const end = Math.min(i + BLOCK, data.length);
      const zero = data.subarray(i, end).equals(ZEROS.subarray(0, end - i));
      if (!zero && run < 0) run = i;
      if (zero && run >= 0) {
        if (!(await this.emit(data, run, i, at))) return;
        run = -1;
      }
    }
    if (run >= 0) await this.emit(data, run, data.length, at);
  }

  /** Write data[from, to) at file offset base+from; false when the budget ended there. */
  private async emit(data: Buffer, from: number, to: number, base: number): Promise<boolean> {
    const allowed = Math.min(to - from, this.out.left());
    // Counted before the await: files copied side by side share one budget.
    this.out.written += allowed;
    if (allowed > 0) await this.fh.write(data, from, allowed, base + from);
    this.writtenTo = Math.max(this.writtenTo, base + from + allowed);
    if (allowed === to - from) return true;
    this.stoppedAt = base + from + allowed;
    return false;
  }
}

/** Reads a link's target where the copy has none of its own (a link already on the host). */
export type LinkLookup = (rel: string) => Promise<string | undefined>;

/**
 * Whether a symlink at `rel` (inside the copied tree) pointing at `target` resolves inside the
 * tree, following the tree's own links the way the kernel will (a `..` after a link leaves the
 * link's target, not the link). Absolute targets, loops and anything past the top escape.
 */
export async function linkStaysInside(
  rel: string,
  target: string,
  links: ReadonlyMap<string, string>,
  onHost: LinkLookup = async () => undefined,
): Promise<boolean> {
  if (rel === "" || target === "" || target.startsWith("/")) return false;
  const todo = [...rel.split("/").slice(0, -1), ...target.split("/")].reverse();
  const at: string[] = [];
  let hops = 0;
  while (todo.length > 0) {
    const part = todo.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (at.length === 0) return false;
      at.pop();
      continue;
    }
    at.push(part);
    const here = at.join("/");
    const next = links.get(here) ?? (await onHost(here));
    if (next === undefined) continue;
    if (++hops > 40 || next === "" || next.startsWith("/")) return false;
    at.pop();
    todo.push(...next.split("/").reverse());
  }
  return true;
}

/** The host's view of links already in dest (an earlier download into the same folder). */
export function hostLinks(dest: string): LinkLookup {
  return async (rel) => {
    const p = path.join(dest, ...rel.split("/"));
    const st = await fs.lstat(p).catch(() => null);
    return st?.isSymbolicLink() ? fs.readlink(p) : undefined;
  };
}

/** Make the links that stay inside the tree (after every file, so nothing is written through one); drop the rest. */
export async function placeLinks(
  dest: string,
  links: ReadonlyMap<string, string>,
  out: CopyOut,
  merged: boolean,
): Promise<void> {
  // Only a folder that was there before the copy can hold links of another download.
  const onHost = merged ? hostLinks(dest) : undefined;
  const keep: [string, string][] = [];
  for (const [rel, target] of links) {
    if (await linkStaysInside(rel, target, links, onHost)) keep.push([rel, target]);
    else out.cut({ path: rel, reason: "link_escapes", target });
  }
  for (const [rel, target] of keep) {
    const at = rel === "" ? dest : path.join(dest, ...rel.split("/"));
    await fs.mkdir(path.dirname(at), { recursive: true });
    await fs.rm(at, { force: true, recursive: true });
    await fs.symlink(target, at);
  }
}
