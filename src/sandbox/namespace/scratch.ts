// The per-sandbox scratch root on the host: <parent>/<name>-<random>/ (0700) holding fs/, the tree
// that becomes "/" inside, and meta/, files bound over system files (an /etc/passwd naming the agent).
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AGENT_HOME, AGENT_NAME, type SystemEntry } from "./host.js";
import type { NamespaceTool } from "./plan.js";
import { DEV_NODES } from "./unshare.js";

export interface Owner {
  uid: number;
  gid: number;
}

export interface ScratchRoot {
  /** The scratch root on the host (the sandbox id). */
  dir: string;
  fsRoot: string;
  metaDir: string;
}

const parents = new Map<string, Promise<string>>();

/** Every scratch parent this process has used: each sandbox hides them all (create.ts). */
export function scratchParentsInUse(): string[] {
  return [...parents.keys()];
}

/** The folder holding every sandbox of this user: created 0700, refused if someone else owns it. */
export function scratchParent(override?: string): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const dir =
    override ?? path.join(os.tmpdir(), uid === 0 ? "benchflow-sandboxes" : `benchflow-sandboxes-${uid}`);
  let ready = parents.get(dir);
  if (ready === undefined) {
    ready = (async () => {
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      const st = await fs.lstat(dir);
      if (!st.isDirectory() || st.uid !== uid) {
        throw new Error(
          `${dir} is not a folder owned by uid ${uid}; remove it or choose another scratch folder`,
        );
      }
      if ((st.mode & 0o777) !== 0o700) await fs.chmod(dir, 0o700);
      return dir;
    })();
    ready.catch(() => parents.delete(dir));
    parents.set(dir, ready);
  }
  return ready;
}

/** meta/owner.json: the run that made a root (pid and host), for a later run to reap it once that one is gone (reap.ts). */
export const OWNER_FILE = "owner.json";

async function writeOwner(metaDir: string): Promise<void> {
  await fs.writeFile(
    path.join(metaDir, OWNER_FILE),
    JSON.stringify({ pid: process.pid, host: os.hostname() }),
  );
}

export async function makeScratchRoot(parent: string, name: string): Promise<ScratchRoot> {
  const slug = name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 40) || "sandbox";
  const dir = await fs.mkdtemp(path.join(parent, `${slug}-`));
  const fsRoot = path.join(dir, "fs");
  const metaDir = path.join(dir, "meta");
  await Promise.all([fs.mkdir(fsRoot, { mode: 0o755 }), fs.mkdir(metaDir, { mode: 0o755 })]);
  await writeOwner(metaDir);
  return { dir, fsRoot, metaDir };
}

/** Mountpoints, symlinks and the standard folders every exec expects in the tree. */
export async function makeSkeleton(
  fsRoot: string,
  system: SystemEntry[],
  tool: NamespaceTool,
): Promise<void> {
  const at = (p: string) => path.join(fsRoot, p);
  // The fixed folders first: a system entry below one of them (a read-only path under /tmp) would
  // otherwise race the plain mkdir of its parent and fail it with EEXIST.
  await Promise.all([
    fs.mkdir(at("proc")),
    fs.mkdir(at("dev")),
    fs.mkdir(at("run")),
    fs.mkdir(at("var/tmp"), { recursive: true }),
    fs.mkdir(at("tmp")),
    fs.mkdir(at("root"), { mode: 0o700 }),
    fs.mkdir(at("logs/verifier"), { recursive: true }),
  ]);
  await Promise.all(
    system.map((e) =>
      e.symlinkTarget === null
        ? fs.mkdir(at(e.path), { recursive: true })
        : fs.symlink(e.symlinkTarget, at(e.path)),
    ),
  );
  // mkdir's mode passes through the umask; sticky world-writable folders need chmod.
  await Promise.all([fs.chmod(at("tmp"), 0o1777), fs.chmod(at("var/tmp"), 0o1777)]);
  if (tool === "unshare") await makeDevSkeleton(at("dev"));
}

/** bwrap builds /dev itself; for unshare the tree carries mountpoints and links for a minimal one. */
async function makeDevSkeleton(dev: string): Promise<void> {
  const links: [string, string][] = [
    ["/proc/self/fd", "fd"],
    ["/proc/self/fd/0", "stdin"],
    ["/proc/self/fd/1", "stdout"],
    ["/proc/self/fd/2", "stderr"],
    ["pts/ptmx", "ptmx"],
  ];
  await Promise.all([
    ...DEV_NODES.map((n) => fs.writeFile(path.join(dev, n), "")),
    ...links.map(([target, name]) => fs.symlink(target, path.join(dev, name))),
    fs.mkdir(path.join(dev, "shm")),
    fs.mkdir(path.join(dev, "pts")),
  ]);
}

/** Folders the agent writes to; owned by the agent when it has its own uid. */
export async function makeAgentFolders(
  fsRoot: string,
  folders: string[],
  owner: Owner | null,
): Promise<void> {
  await Promise.all(
    folders.map(async (folder) => {
      const hostPath = path.join(fsRoot, folder);
      await fs.mkdir(hostPath, { recursive: true, mode: 0o755 });
      if (owner) await fs.chown(hostPath, owner.uid, owner.gid);
    }),
  );
}

let accounts: Promise<{ passwd: string; group: string } | null> | undefined;

/** /etc/passwd and /etc/group as the host has them, with the agent's uid named "agent". */
export async function writeAgentAccounts(
  metaDir: string,
  owner: Owner,
): Promise<{ host: string; sandbox: string }[]> {
  accounts ??= readAccounts(owner);
  const files = await accounts;
  if (files === null) return [];
  const passwd = path.join(metaDir, "passwd");
  const group = path.join(metaDir, "group");
  await Promise.all([
    fs.writeFile(passwd, files.passwd, { mode: 0o644 }),
    fs.writeFile(group, files.group, { mode: 0o644 }),
  ]);
  return [
    { host: passwd, sandbox: "/etc/passwd" },
    { host: group, sandbox: "/etc/group" },
  ];
}

async function readAccounts(owner: Owner): Promise<{ passwd: string; group: string } | null> {
  try {
    const [passwd, group] = await Promise.all([
      fs.readFile("/etc/passwd", "utf8"),
      fs.readFile("/etc/group", "utf8"),
    ]);
    const keep = (text: string, id: number) =>
      text
        .split("\n")
        .filter(
          (line) => line !== "" && !line.startsWith(`${AGENT_NAME}:`) && line.split(":")[2] !== String(id),
        )
        .join("\n");
    return {
      passwd: `${keep(passwd, owner.uid)}\n${AGENT_NAME}:x:${owner.uid}:${owner.gid}:agent:${AGENT_HOME}:/bin/bash\n`,
      group: `${keep(group, owner.gid)}\n${AGENT_NAME}:x:${owner.gid}:\n`,
    };
  } catch {
    return null;
  }
}

/** rm -rf that also gets through folders the agent made unwritable (when we are not root). */
export async function removeTree(dir: string): Promise<void> {
  try {
    await fs.rm(dir, { recursive: true, force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM" && code !== "ENOTEMPTY") throw err;
    await makeWritable(dir);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function makeWritable(dir: string): Promise<void> {
  await fs.chmod(dir, 0o700).catch(() => {});
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => makeWritable(path.join(dir, e.name))));
}
