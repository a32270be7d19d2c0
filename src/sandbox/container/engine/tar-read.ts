// Unpacks an archive the engine sends for `GET /containers/{id}/archive`: its first entry is the
// copied file or folder itself, which lands at hostPath. The archive is the agent's to shape, so
// unpacking is bounded like every copy out of a sandbox (util/copy-out.ts): nothing lands outside
// hostPath (`..`, absolute names and entries beneath a symlink are refused), symlinks are made
// last and only when they stay inside the tree, hard links only to files of the same archive,
// zeros become holes (the engines send a sparse file's zeros), the budget cuts, and every entry
// left out is recorded.
import { promises as fs } from "node:fs";
import path from "node:path";
import { type CopyOut, placeLinks, SparseFile } from "../../copy-out.js";

const BLOCK = 512;

class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else {
        this.buffered.push(next.value);
        this.length += next.value.length;
      }
    }
  }

  /** Exactly n bytes, or fewer at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const first = this.buffered[0];
    if (first && first.length >= n) {
      if (first.length === n) this.buffered.shift();
      else this.buffered[0] = first.subarray(n);
      this.length -= n;
      return first.subarray(0, n);
    }
    const all = Buffer.concat(this.buffered);
    this.buffered = all.length > n ? [all.subarray(n)] : [];
    this.length = Math.max(0, all.length - n);
    return all.subarray(0, n);
  }

  /** Up to n bytes in pieces as they arrive. */
  async *pieces(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.length === 0) await this.fill(1);
      if (this.length === 0) return;
      const chunk = await this.read(Math.min(left, this.length));
      left -= chunk.length;
      yield chunk;
    }
  }
}

function text(block: Buffer, start: number, len: number): string {
  const raw = block.subarray(start, start + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? raw.length : end).toString("utf8");
}

function num(block: Buffer, start: number, len: number): number {
  return Number.parseInt(text(block, start, len).trim() || "0", 8);
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    const len = space < 0 ? 0 : Number(data.subarray(i, space).toString("ascii"));
    if (!(len > 0)) break;
    const record = data.subarray(space + 1, i + len - 1).toString("utf8");
    const eq = record.indexOf("=");
    out[record.slice(0, eq)] = record.slice(eq + 1);
    i += len;
  }
  return out;
}

/** rel with "." and empty parts gone ("a/./b//c" -> "a/b/c"), or null when it climbs (".."). */
function normal(rel: string): string | null {
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  return parts.includes("..") ? null : parts.join("/");
}

function hostPathOf(root: string, rel: string): string {
  return rel === "" ? root : path.join(root, ...rel.split("/"));
}

export interface ArchiveEntry {
  /** Without leading or trailing slashes. */
  name: string;
  /** "0" file, "5" folder, "2" symlink, "1" hard link; other tar types pass through. */
  type: string;
  mode: number;
  size: number;
  linkname: string;
  /** The file's bytes in pieces; data a consumer leaves unread is skipped. */
  body: () => AsyncGenerator<Buffer>;
}

const padOf = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/** The entries of a tar stream, one at a time (PAX and GNU long names resolved). */
export async function* readArchive(stream: AsyncIterable<Buffer>): AsyncGenerator<ArchiveEntry> {
  const reader = new ByteReader(stream[Symbol.asyncIterator]());
  let pax: Record<string, string> = {};
  for (;;) {
    const block = await reader.read(BLOCK);
    if (block.length < BLOCK || block.every((b) => b === 0)) break;
    const type = text(block, 156, 1) || "0";
    const size = pax.size ? Number(pax.size) : num(block, 124, 12);
    const prefix = text(block, 345, 155);
    const name = pax.path ?? (prefix ? `${prefix}/${text(block, 0, 100)}` : text(block, 0, 100));
    const linkname = pax.linkpath ?? text(block, 157, 100);
    pax = {};
    if (type === "x" || type === "L" || type === "K") {
      const data = await reader.read(size);
      await reader.read(padOf(size));
      if (type === "x") pax = parsePax(data);
      else pax = { [type === "L" ? "path" : "linkpath"]: text(data, 0, data.length) };
      continue;
    }
    let left = type === "5" || type === "2" ? 0 : size;
    async function* body(): AsyncGenerator<Buffer> {
      for await (const piece of reader.pieces(left)) {
        left -= piece.length;
        yield piece;
      }
    }
    yield {
      name: name.replace(/^\/+/, "").replace(/\/+$/, ""),
      type,
      mode: num(block, 100, 8),
      size,
      linkname,
      body,
    };
    for await (const _ of reader.pieces(left + padOf(size))) void _;
  }
  // Drain whatever follows the end blocks so the connection can be reused.
  for await (const _ of reader.pieces(Number.MAX_SAFE_INTEGER)) void _;
}

/** The stream's bytes, counted against the download's scan limit; past it the stream is closed. */
async function* scanned(stream: AsyncIterable<Buffer> & { destroy?: () => void }, out: CopyOut) {
  for await (const chunk of stream) {
    out.scanned += chunk.length;
    if (out.scanned > out.maxScan) {
      out.cut({ path: "", reason: "scan_limit" });
      stream.destroy?.();
      return;
    }
    yield chunk as Buffer;
  }
}

/** Tar types that are fifos and devices ("3" char, "4" block, "6" fifo). */
const SPECIAL = new Set(["3", "4", "6"]);

/** Extracts a container archive so that its first (top) entry becomes hostPath, within out's budget. */
export async function extractTo(
  stream: AsyncIterable<Buffer> & { destroy?: () => void },
  hostPath: string,
  out: CopyOut,
): Promise<void> {
  const merged = await fs.lstat(hostPath).then(
    () => true,
    () => false,
  );
  const links = new Map<string, string>();
  const files = new Set<string>();
  let top: string | null = null;
  for await (const entry of readArchive(scanned(stream, out))) {
    if (entry.type === "g") continue;
    const first = top === null;
    top ??= entry.name.split("/")[0] ?? "";
    const rel = inside(entry.name, top);
    // The top comes once, first: a second one would replace the whole destination.
    if (rel === null || (rel === "" && !first) || beneathLink(rel, links)) {
      out.cut({ path: entry.name, reason: "unsafe_path" });
      continue;
    }
    const dest = hostPathOf(hostPath, rel);
    if (out.reserved(rel, path.posix.basename(rel))) continue;
    if (SPECIAL.has(entry.type)) {
      out.cut({ path: rel, reason: "special_file" });
      continue;
    }
    if (!["0", "7", "5", "2", "1"].includes(entry.type)) {
      out.cut({ path: rel, reason: "unsupported", size: entry.size });
      continue;
    }
    if (!out.admit(rel, entry.type === "0" || entry.type === "7" ? entry.size : undefined)) continue;
    // A later entry of the same name replaces an earlier one, as tar does.
    links.delete(rel);
    files.delete(rel);
    try {
      if (entry.type === "5") await makeDir(dest);
      else if (entry.type === "2") links.set(rel, entry.linkname);
      else if (entry.type === "1") await hardLink(entry, dest, hostPath, top, files, out, rel);
      else {
        await writeFile(entry, dest, out, rel);
        files.add(rel);
      }
    } catch (err) {
      // A name clash the archive made (a file where a folder was, ...): that entry is left out.
      const code = (err as NodeJS.ErrnoException).code;
      if (!["ENOTDIR", "EEXIST", "EISDIR", "ENOENT"].includes(code ?? "")) throw err;
      out.cut({ path: rel, reason: "unsupported", size: entry.size });
    }
  }
  await placeLinks(hostPath, links, out, merged);
}

/** The entry's path inside the copied tree ("" for the top), or null when it names another top or climbs. */
function inside(name: string, top: string): string | null {
  if (name === top) return "";
  return name.startsWith(`${top}/`) ? normal(name.slice(top.length + 1)) : null;
}

function beneathLink(rel: string, links: ReadonlyMap<string, string>): boolean {
  for (let i = rel.indexOf("/"); i >= 0; i = rel.indexOf("/", i + 1)) {
    if (links.has(rel.slice(0, i))) return true;
  }
  return rel !== "" && links.has("");
}

async function makeDir(dest: string): Promise<void> {
  const st = await fs.lstat(dest).catch(() => null);
  if (st?.isDirectory()) return;
  if (st) await fs.rm(dest, { force: true, recursive: true });
  await fs.mkdir(dest, { recursive: true, mode: 0o755 });
}

async function writeFile(entry: ArchiveEntry, dest: string, out: CopyOut, rel: string): Promise<void> {
  await fs.mkdir(path.dirname(dest), { recursive: true });
  const file = await SparseFile.create(dest, entry.mode, out, entry.size);
  let seen = 0;
  try {
    for await (const piece of entry.body()) {
      seen += piece.length;
      await file.write(piece);
      // Past the budget the rest of the body is read by the archive reader, never written.
      if (file.stopped) break;
    }
  } finally {
    const kept = await file.close();
    if (file.stopped) out.cut({ path: rel, reason: "over_budget", size: entry.size, kept_bytes: kept });
    else if (seen < entry.size)
      out.cut({ path: rel, reason: "scan_limit", size: entry.size, kept_bytes: kept });
  }
}

/** A hard link stays one only to a file this archive wrote; its name is the archive's, like the entries'. */
async function hardLink(
  entry: ArchiveEntry,
  dest: string,
  hostPath: string,
  top: string,
  files: ReadonlySet<string>,
  out: CopyOut,
  rel: string,
): Promise<void> {
  const targetRel = inside(entry.linkname.replace(/^\/+/, "").replace(/\/+$/, ""), top);
  if (targetRel === null || !files.has(targetRel)) {
    out.cut({ path: rel, reason: "hardlink_outside", target: entry.linkname });
    return;
  }
  const target = hostPathOf(hostPath, targetRel);
  await fs.mkdir(path.dirname(dest), { recursive: true });
  await fs.rm(dest, { force: true, recursive: true });
  await fs.link(target, dest);
}
