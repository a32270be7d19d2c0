// A tree copied out of a sandbox onto the host (the namespace sandbox's download: its tree is a
// folder on the host). What is in it is the agent's to shape, so the copy is bounded by a CopyOut
// (copy-out.ts): files count against the budget and keep their holes, links come out only when
// they stay inside the tree, fifos, sockets and devices stay behind, and each of these is recorded.
import { execFile } from "node:child_process";
import { constants, promises as fs, type Stats } from "node:fs";
import path from "node:path";
import { Limiter, mapLimit } from "../util/limit.js";
import { type CopyOut, ENTRY_COST, placeLinks, SparseFile } from "./copy-out.js";

/** Dense files up to this size go with one copyFile (the common case: small logs stay fast). */
const FAST_MAX = 1024 * 1024;
const READ_SIZE = 1024 * 1024;

interface OutWalk {
  out: CopyOut;
  /** The tree's symlinks (path inside the tree -> target), made after every file. */
  links: Map<string, string>;
  /** Files read piece by piece hold a descriptor and a buffer each: a few at a time. */
  gate: Limiter;
}

/** Copy `src` (a file, folder or symlink) out of a sandbox to `dest`, within `out`'s budget. */
export async function copyTreeOut(src: string, dest: string, out: CopyOut): Promise<void> {
  const merged = await fs.lstat(dest).then(
    () => true,
    () => false,
  );
  const walk: OutWalk = { out, links: new Map(), gate: new Limiter(4) };
  await outEntry(walk, src, dest, "", await fs.lstat(src));
  await placeLinks(dest, walk.links, out, merged);
}

async function outEntry(walk: OutWalk, from: string, to: string, rel: string, st: Stats): Promise<void> {
  const { out } = walk;
  if (st.isFile()) return outFile(walk, from, to, rel, st);
  if (st.isSymbolicLink()) {
    if (out.admit(rel)) walk.links.set(rel, await fs.readlink(from));
    return;
  }
  if (!st.isDirectory()) return out.cut({ path: rel, reason: "special_file" });
  if (!out.admit(rel)) return;
  const mode = st.mode & 0o777;
  const made = await fs.mkdir(to, { recursive: true, mode });
  if (made !== undefined && mode !== 0o755) await fs.chmod(to, mode);
  const entries = await fs.readdir(from, { withFileTypes: true });
  // A folder of a million files must not become a million calls in flight.
  await mapLimit(entries, 64, async (e) => {
    const sub = rel === "" ? e.name : `${rel}/${e.name}`;
    if (out.reserved(sub, e.name)) return;
    if (out.left() < ENTRY_COST) return out.cut({ path: sub, reason: "budget_spent" });
    if (!e.isFile() && !e.isDirectory() && !e.isSymbolicLink()) {
      return out.cut({ path: sub, reason: "special_file" });
    }
    const subFrom = path.join(from, e.name);
    return outEntry(walk, subFrom, path.join(to, e.name), sub, await fs.lstat(subFrom));
  });
}

async function outFile(walk: OutWalk, from: string, to: string, rel: string, st: Stats): Promise<void> {
  const { out } = walk;
  if (!out.admit(rel, st.size)) return;
  const dense = st.blocks * 512 >= st.size;
  if (dense && st.size <= FAST_MAX && st.size <= out.left() && out.scanned + st.size <= out.maxScan) {
    // Nothing in the sandbox runs during a download (each exec's processes die with it), so the
    // size seen is the size copied.
    out.written += st.size;
    out.scanned += st.size;
    await fs.copyFile(from, to);
    if (st.mode & 0o7000) await fs.chmod(to, st.mode & 0o777);
    return;
  }
  const allocated = st.blocks * 512;
  if (!dense && allocated <= out.left()) {
    // A sparse file whose data fits: cp finds the data with SEEK_DATA and never reads the holes
    // (reading 1 GiB of holes costs seconds of kernel time; Node cannot seek to data).
    out.written += allocated;
    await walk.gate.run(() => copyHoles(from, to));
    await fs.chmod(to, st.mode & 0o777);
    const copied = await fs.lstat(to);
    out.written -= Math.max(0, allocated - copied.blocks * 512);
    return;
  }
  await walk.gate.run(() => copySparse(out, from, to, rel, st));
}

function copyHoles(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      "cp",
      [
        "--sparse=always",
        "--reflink=never",
        "--no-dereference",
        "--remove-destination",
        "-T",
        "--",
        from,
        to,
      ],
      (err, _stdout, stderr) =>
        err ? reject(new Error(`cp ${from}: ${stderr.trim() || err.message}`)) : resolve(),
    );
  });
}

/** Read the file in order and write only its data: zeros become holes, the budget cuts it. */
async function copySparse(out: CopyOut, from: string, to: string, rel: string, st: Stats): Promise<void> {
  const src = await fs.open(from, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const file = await SparseFile.create(to, st.mode, out);
    const buf = Buffer.allocUnsafe(READ_SIZE);
    let pos = 0;
    let scanCut = false;
    while (!file.stopped) {
      if (out.scanned >= out.maxScan) {
        scanCut = true;
        break;
      }
      const { bytesRead } = await src.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      out.scanned += bytesRead;
      pos += bytesRead;
      await file.write(buf.subarray(0, bytesRead));
    }
    const kept = await file.close();
    if (file.stopped) out.cut({ path: rel, reason: "over_budget", size: st.size, kept_bytes: kept });
    else if (scanCut) out.cut({ path: rel, reason: "scan_limit", size: st.size, kept_bytes: kept });
  } finally {
    await src.close();
  }
}
