// /raw/<path>: a file of the jobs folder as text. The path must stay inside JOBS_DIR after every
// link is followed: `..`, absolute paths, and links (or link parents) that lead out are a 404.
import { promises as fs } from "node:fs";
import path from "node:path";

const MAX_RAW = 64 * 1024 * 1024;

/** The real file a URL path names inside root, or null. `segments` are the URL's, still encoded. */
export async function resolveRaw(root: string, segments: readonly string[]): Promise<string | null> {
  const parts: string[] = [];
  for (const s of segments) {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      return null;
    }
    if (d === "" || d === "." || d === ".." || d.includes("/") || d.includes("\\") || d.includes("\0"))
      return null;
    parts.push(d);
  }
  if (parts.length === 0) return null;
  const realRoot = await fs.realpath(root).catch(() => null);
  if (!realRoot) return null;
  const real = await fs.realpath(path.join(realRoot, ...parts)).catch(() => null);
  if (!real?.startsWith(realRoot + path.sep)) return null;
  const st = await fs.stat(real).catch(() => null);
  if (!st?.isFile() || st.size > MAX_RAW) return null;
  return real;
}
