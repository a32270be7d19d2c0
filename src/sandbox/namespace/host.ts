// Facts about the host that every sandbox needs, read once per process: who we are, which system
// folders exist (and which are symlinks, as on merged-/usr Debian), where the tools live.
import { constants, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { envVar } from "../../env.js";

/** The agent's uid/gid when the host runs us as root (a constant so results are comparable). */
export const AGENT_UID = 1000;
export const AGENT_GID = 1000;
export const AGENT_NAME = "agent";
export const AGENT_HOME = "/home/agent";

/** Host folders shown read-only in every sandbox (those that exist; symlinks are reproduced). */
const SYSTEM_PATHS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** The search path inside sandboxes, and for the tools we start. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface SystemEntry {
  path: string;
  /** Set when the host has a symlink here (e.g. /bin -> usr/bin). */
  symlinkTarget: string | null;
}

export const hostIsRoot = (): boolean => process.getuid?.() === 0;

let systemEntries: Promise<SystemEntry[]> | undefined;

export function systemEntriesOf(extraReadOnly: string[] = []): Promise<SystemEntry[]> {
  systemEntries ??= readEntries(SYSTEM_PATHS, false);
  if (extraReadOnly.length === 0) return systemEntries;
  return Promise.all([systemEntries, readEntries(extraReadOnly, true)]).then(([a, b]) => [...a, ...b]);
}

/** System paths keep their symlinks (merged /usr); extra paths are bound through them. */
async function readEntries(paths: string[], follow: boolean): Promise<SystemEntry[]> {
  const entries = await Promise.all(
    paths.map(async (p): Promise<SystemEntry | null> => {
      const st = await (follow ? fs.stat(p) : fs.lstat(p)).catch(() => null);
      if (st === null) return null;
      if (st.isSymbolicLink()) return { path: p, symlinkTarget: await fs.readlink(p) };
      return st.isDirectory() ? { path: p, symlinkTarget: null } : null;
    }),
  );
  return entries.filter((e): e is SystemEntry => e !== null);
}

const executables = new Map<string, Promise<string | null>>();

/** Look a program up on the standard search path without spawning `which`. */
export function findExecutable(name: string): Promise<string | null> {
  let found = executables.get(name);
  if (found === undefined) {
    found = (async () => {
      for (const dir of SANDBOX_PATH.split(":")) {
        const candidate = path.join(dir, name);
        try {
          await fs.access(candidate, constants.X_OK);
          return candidate;
        } catch {}
      }
      return null;
    })();
    executables.set(name, found);
  }
  return found;
}

let userName: string | undefined;

export function hostUserName(): string {
  userName ??= safeUserName();
  return userName;
}

function safeUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return envVar("USER") ?? "user";
  }
}

/** True when `p` is `root` or lies below it (both absolute, normalized). */
export function isWithin(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}
