// A lean recursive copy for the small trees that move in and out of sandboxes. fs.cp spends
// several stat calls per entry on checks we do not need; a trial copies five trees, so it shows.
import { promises as fs } from "node:fs";
import path from "node:path";

export interface CopyTreeOptions {
  /** Decide per symlink (given its path and target) whether to copy it; plain files and folders always go. */
  keepSymlink?: (linkPath: string, target: string) => boolean;
}

/** Copy `src` (a file, folder or symlink) to `dest`, merging into existing folders, overwriting files. */
export async function copyTree(src: string, dest: string, options: CopyTreeOptions = {}): Promise<void> {
  const st = await fs.lstat(src);
  if (st.isDirectory()) return copyDir(src, dest, st.mode & 0o7777, options);
  if (st.isSymbolicLink()) return copyLink(src, dest, options);
  if (st.isFile()) await fs.copyFile(src, dest);
}

async function copyDir(src: string, dest: string, mode: number, options: CopyTreeOptions): Promise<void> {
  const made = await fs.mkdir(dest, { recursive: true, mode });
  if (made !== undefined && mode !== 0o755) await fs.chmod(dest, mode);
  const entries = await fs.readdir(src, { withFileTypes: true });
  await Promise.all(
    entries.map(async (e) => {
      const from = path.join(src, e.name);
      const to = path.join(dest, e.name);
      if (e.isFile()) return fs.copyFile(from, to);
      if (e.isSymbolicLink()) return copyLink(from, to, options);
      if (e.isDirectory()) {
        const sub = await fs.lstat(from);
        return copyDir(from, to, sub.mode & 0o7777, options);
      }
      // Sockets, fifos and devices are not files a task or a rollout carries.
    }),
  );
}

async function copyLink(src: string, dest: string, options: CopyTreeOptions): Promise<void> {
  const target = await fs.readlink(src);
  if (options.keepSymlink && !options.keepSymlink(src, target)) return;
  await fs.rm(dest, { force: true });
  await fs.symlink(target, dest);
}
