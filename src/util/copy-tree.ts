// A lean recursive copy for the small trees that move in and out of sandboxes. fs.cp spends
// several stat calls per entry on checks we do not need; a rollout copies five trees, so it shows.
// Everything is copied as it is (the host's own task files, a verifier's output already on the
// host). A copy out of a sandbox is the agent's to shape, so it is bounded and has a copy of its
// own: src/sandbox/copy-out-tree.ts.
import { promises as fs } from "node:fs";
import path from "node:path";

/** Copy `src` (a file, folder or symlink) to `dest`, merging into existing folders, overwriting files. */
export async function copyTree(src: string, dest: string): Promise<void> {
  const st = await fs.lstat(src);
  if (st.isDirectory()) return copyDir(src, dest, st.mode & 0o7777);
  if (st.isSymbolicLink()) return copyLink(src, dest);
  if (st.isFile()) await fs.copyFile(src, dest);
}

async function copyDir(src: string, dest: string, mode: number): Promise<void> {
  const made = await fs.mkdir(dest, { recursive: true, mode });
  if (made !== undefined && mode !== 0o755) await fs.chmod(dest, mode);
  const entries = await fs.readdir(src, { withFileTypes: true });
  await Promise.all(
    entries.map(async (e) => {
      const from = path.join(src, e.name);
      const to = path.join(dest, e.name);
      if (e.isFile()) return fs.copyFile(from, to);
      if (e.isSymbolicLink()) return copyLink(from, to);
      if (e.isDirectory()) {
        const sub = await fs.lstat(from);
        return copyDir(from, to, sub.mode & 0o7777);
      }
      // Sockets, fifos and devices are not files a task or a rollout carries.
    }),
  );
}

async function copyLink(src: string, dest: string): Promise<void> {
  const target = await fs.readlink(src);
  await fs.rm(dest, { force: true });
  await fs.symlink(target, dest);
}
