// Copies between the host and a sandbox's scratch tree, with in-process fs calls (no cp/chown
// children). Ownership follows what the agent may touch: agent areas belong to the agent's uid;
// everything else stays root's but readable, so the agent can run what the verifier or oracle needs.
import { promises as fs } from "node:fs";
import path from "node:path";
import { opt } from "../../options.js";
import { copyTree } from "../../util/copy-tree.js";
import { CopyOut } from "../copy-out.js";
import { copyTreeOut } from "../copy-out-tree.js";
import { DEFAULT_DOWNLOAD_MAX_BYTES, type DownloadOptions } from "../types.js";
import { isWithin } from "./host.js";
import { resolveInTree, type TreeView } from "./paths.js";
import type { Owner } from "./scratch.js";

export interface Ownership {
  /** The agent's uid/gid when it differs from ours (host root); null: no chown needed. */
  agent: Owner | null;
  /** Sandbox folders the agent owns (workspace, /logs/agent, /logs/artifacts, /tmp, HOME). */
  agentAreas: string[];
}

export class ReadOnlyPathError extends Error {
  override name = "ReadOnlyPathError";
}

/** Copy a host file or folder to sandboxPath (folder contents land under it). Returns the host path written. */
export async function upload(
  view: TreeView,
  hostPath: string,
  sandboxPath: string,
  options: { ownership: Ownership; ownedByAgent?: boolean },
): Promise<string> {
  const st = await fs.stat(hostPath).catch(() => null);
  if (st === null) throw new Error(`upload: host path ${hostPath} does not exist`);
  const resolved = await resolveInTree(view, sandboxPath);
  if (resolved === null) throw new Error(`upload: ${sandboxPath} cannot be resolved inside the sandbox`);
  if (resolved.kind === "system") {
    throw new ReadOnlyPathError(
      `${sandboxPath} lies in ${resolved.root}, which the namespace sandbox shows read-only from the host; use ${opt("sandbox", "container")} to write there`,
    );
  }
  let dest = resolved.host;
  let sandboxDest = resolved.sandbox;
  if (st.isFile()) {
    const destSt = await fs.stat(dest).catch(() => null);
    if (sandboxPath.endsWith("/") || destSt?.isDirectory()) {
      dest = path.join(dest, path.basename(hostPath));
      sandboxDest = path.posix.join(sandboxDest, path.basename(hostPath));
    }
  }
  const created = await fs.mkdir(st.isDirectory() ? dest : path.dirname(dest), { recursive: true });
  await copyTree(hostPath, dest);
  const { agent, agentAreas } = options.ownership;
  if (agent !== null) {
    const top = created ?? dest;
    const mine = options.ownedByAgent || agentAreas.some((area) => isWithin(sandboxDest, area));
    await walk(top, mine ? (p, s) => chownTo(p, s, agent) : makeReadable);
  }
  return dest;
}

/** Copy a sandbox file or folder out to hostPath, bounded (copy-out.ts); a missing source copies nothing. */
export async function download(
  view: TreeView,
  sandboxPath: string,
  hostPath: string,
  options: DownloadOptions = {},
): Promise<void> {
  const out = new CopyOut(sandboxPath, options.maxBytes ?? DEFAULT_DOWNLOAD_MAX_BYTES);
  const resolved = await resolveInTree(view, sandboxPath);
  if (resolved === null || (resolved.kind === "system" && resolved.hidden)) return;
  const source = resolved.host;
  const st = await fs.lstat(source).catch(() => null);
  if (st === null) return;
  await fs.mkdir(path.dirname(hostPath), { recursive: true });
  // Only symlinks that stay inside the copied tree come out: nothing that points at host files.
  await copyTreeOut(source, hostPath, out);
  await out.finish(hostPath);
}

type Fix = (p: string, st: Awaited<ReturnType<typeof fs.lstat>>) => Promise<void>;

export async function walk(p: string, fix: Fix): Promise<void> {
  const st = await fs.lstat(p);
  await fix(p, st);
  if (!st.isDirectory()) return;
  const names = await fs.readdir(p);
  await Promise.all(names.map((name) => walk(path.join(p, name), fix)));
}

function chownTo(p: string, _st: unknown, owner: Owner): Promise<void> {
  return fs.lchown(p, owner.uid, owner.gid);
}

async function makeReadable(p: string, st: Awaited<ReturnType<typeof fs.lstat>>): Promise<void> {
  if (st.isSymbolicLink()) return;
  const mode = Number(st.mode) & 0o7777;
  const wanted = st.isDirectory() || mode & 0o100 ? mode | 0o055 : mode | 0o044;
  if (wanted !== mode) await fs.chmod(p, wanted);
}
