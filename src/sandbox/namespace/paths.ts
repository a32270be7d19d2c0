// Maps a path inside the sandbox to the host: either into the scratch tree (fsRoot) or, for the
// read-only system folders, to the same host path. Symlinks in the tree are followed the way the
// sandbox sees them (absolute targets re-rooted at fsRoot), so a link the agent planted can never
// lead a host-side copy outside the tree.
import { promises as fs } from "node:fs";
import path from "node:path";
import { isWithin, type SystemEntry } from "./host.js";

export interface TreeView {
  fsRoot: string;
  system: SystemEntry[];
  hidden: string[];
}

export type Resolved =
  | { kind: "tree"; host: string; sandbox: string }
  | { kind: "system"; host: string; root: string; hidden: boolean };

/** Absolute and normalized, or a clear error naming the bad path. */
export function sandboxPathOf(p: string): string {
  if (!p.startsWith("/")) throw new Error(`sandbox path "${p}" must be absolute (start with /)`);
  return path.posix.normalize(p);
}

export function systemRootOf(view: TreeView, sandboxPath: string): string | null {
  for (const entry of view.system) if (isWithin(sandboxPath, entry.path)) return entry.path;
  return null;
}

export async function resolveInTree(view: TreeView, sandboxPath: string): Promise<Resolved | null> {
  let pending = sandboxPathOf(sandboxPath).split("/").filter(Boolean);
  let done: string[] = [];
  let hops = 0;
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === ".") continue;
    if (name === "..") {
      done.pop();
      continue;
    }
    const current = `/${[...done, name].join("/")}`;
    const root = systemRootOf(view, current);
    if (root !== null) {
      const host = path.posix.join(current, ...pending);
      return { kind: "system", host, root, hidden: view.hidden.some((h) => isWithin(host, h)) };
    }
    const host = path.join(view.fsRoot, current);
    const st = await fs.lstat(host).catch(() => null);
    if (st?.isSymbolicLink()) {
      if (++hops > 40) return null;
      const target = await fs.readlink(host);
      if (target.startsWith("/")) done = [];
      pending = [...target.split("/").filter(Boolean), ...pending];
      continue;
    }
    done.push(name);
    // Nothing below a missing component can be a symlink.
    if (st === null) {
      done.push(...pending.filter((p) => p !== "." && p !== ".."));
      if (pending.includes("..")) return null;
      break;
    }
  }
  return { kind: "tree", host: path.join(view.fsRoot, ...done), sandbox: `/${done.join("/")}` };
}
