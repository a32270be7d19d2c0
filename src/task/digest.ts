// The task digest, byte-compatible with upstream: "sha256:" + sha256 over every regular file sorted by
// POSIX relative path, each contributing path_utf8 + 0x00 + sha256(bytes); symlinks and modes excluded.
import { createHash } from "node:crypto";
import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";

/** Provenance marker written by dataset tooling; it must not change a task's identity. */
const EXCLUDED = new Set([".benchflow-source.json"]);

export interface TaskFiles {
  /** Regular files, POSIX paths relative to the root, in digest order. */
  files: string[];
  /** Symlinks found (not followed), relative POSIX paths. */
  symlinks: string[];
}

/** Walks `root` without following symlinks. */
export async function listTaskFiles(root: string): Promise<TaskFiles> {
  const files: string[] = [];
  const symlinks: string[] = [];
  async function visit(dir: string, rel: string): Promise<void> {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) symlinks.push(relPath);
      else if (entry.isDirectory()) await visit(path.join(dir, entry.name), relPath);
      else if (entry.isFile()) files.push(relPath);
    }
  }
  await visit(root, "");
  // Python sorts str by code point, which is the byte order of UTF-8.
  const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  return { files: files.sort(byCodePoint), symlinks: symlinks.sort(byCodePoint) };
}

/** Digest of a task folder, or of any folder such as environment/ (image tags). */
export async function taskDigest(dir: string): Promise<string> {
  const { files } = await listTaskFiles(dir);
  const outer = createHash("sha256");
  for (const rel of files) {
    if (EXCLUDED.has(rel)) continue;
    const inner = createHash("sha256");
    for await (const chunk of createReadStream(path.join(dir, ...rel.split("/"))))
      inner.update(chunk as Buffer);
    outer.update(Buffer.from(rel, "utf8"));
    outer.update(Buffer.from([0]));
    outer.update(inner.digest());
  }
  return `sha256:${outer.digest("hex")}`;
}
