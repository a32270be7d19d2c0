// `mkdir -p` that always ends. Node's recursive mkdir retries a component for ever when the parent
// exists but refuses children with ENOENT (anything under /proc): 90 % CPU, deaf to SIGTERM. Here the
// nearest existing ancestor is found first and each missing folder is made once, so every failure is
// one errno about one path.
import { promises as fs } from "node:fs";
import path from "node:path";

/** Why a folder could not be made, with the path that refused. */
export class MakeDirsError extends Error {
  override name = "MakeDirsError";
  constructor(
    /** ENOTDIR: `at` is a file (or other non-folder); otherwise the errno of mkdir or stat. */
    readonly code: string,
    readonly at: string,
  ) {
    super(code === "ENOTDIR" ? `${at} is not a folder` : `cannot make ${at} (${code})`);
  }
}

async function kindOf(p: string): Promise<"dir" | "other" | "none"> {
  try {
    return (await fs.stat(p)).isDirectory() ? "dir" : "other";
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOTDIR: an ancestor is a file; the walk up finds which.
    if (code === "ENOENT" || code === "ENOTDIR") return "none";
    throw new MakeDirsError(code ?? "error", p);
  }
}

/** Make `dir` and its missing parents; a no-op when it is a folder already. */
export async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  let at = path.resolve(dir);
  for (;;) {
    const kind = await kindOf(at);
    if (kind === "dir") break;
    if (kind === "other") throw new MakeDirsError("ENOTDIR", at);
    missing.push(at);
    const parent = path.dirname(at);
    if (parent === at) throw new MakeDirsError("ENOENT", at);
    at = parent;
  }
  for (const d of missing.reverse()) {
    try {
      await fs.mkdir(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "error";
      // Made by someone else in the meantime: fine if it is a folder.
      if (code === "EEXIST" && (await kindOf(d)) === "dir") continue;
      throw new MakeDirsError(code === "EEXIST" ? "ENOTDIR" : code, d);
    }
  }
}
