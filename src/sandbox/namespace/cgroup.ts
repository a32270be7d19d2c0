// A control group per sandbox phase, so the task's process and memory limits hold for the whole tree
// an exec starts. Made below our own cgroup (so limits set on us still hold too), at
// <ours>/benchflow/<name>: cgroup v1 needs one folder per controller (pids, memory), cgroup v2 one
// folder with both controllers delegated. Each exec joins before it can fork: the tool's argv is
// wrapped in a tiny sh that writes its own pid into cgroup.procs and then execs the tool.
import { promises as fs } from "node:fs";
import path from "node:path";

const ROOT = "/sys/fs/cgroup";

export interface CgroupLimits {
  pids: number;
  memoryBytes: number;
}

export interface Cgroup {
  version: 1 | 2;
  /** One folder per controller (v1) or the one folder (v2); removed by removeCgroup. */
  dirs: string[];
}

export type CgroupAttempt = { cgroup: Cgroup; reason: null } | { cgroup: null; reason: string };

/** Our own cgroup path per controller ("" key: the v2 hierarchy), from /proc/self/cgroup. */
async function ownPaths(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const text = await fs.readFile("/proc/self/cgroup", "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    const [, controllers, p] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined || p === undefined) continue;
    for (const c of controllers.split(",")) out.set(c, p);
  }
  return out;
}

/** Makes the cgroup and writes its limits; the reason says why not (then the caller falls back). */
export async function makeCgroup(name: string, limits: CgroupLimits): Promise<CgroupAttempt> {
  const own = await ownPaths();
  const v2 = await fs
    .access(path.join(ROOT, "cgroup.controllers"))
    .then(() => true)
    .catch(() => false);
  try {
    return {
      cgroup: v2 ? await makeV2(own.get("") ?? "/", name, limits) : await makeV1(own, name, limits),
      reason: null,
    };
  } catch (err) {
    return { cgroup: null, reason: (err as Error).message };
  }
}

async function makeV1(own: Map<string, string>, name: string, limits: CgroupLimits): Promise<Cgroup> {
  const made: string[] = [];
  try {
    for (const controller of ["pids", "memory"]) {
      const mount = path.join(ROOT, controller);
      if (!(await exists(path.join(mount, "cgroup.procs")))) {
        throw new Error(`cgroup v1 controller ${controller} is not mounted at ${mount}`);
      }
      const dir = path.join(mount, own.get(controller) ?? "/", "benchflow", name);
      await mkdirCgroup(dir);
      made.push(dir);
      if (controller === "pids") await write(dir, "pids.max", String(limits.pids));
      else {
        await write(dir, "memory.limit_in_bytes", String(limits.memoryBytes));
        // Memory + swap capped at the same figure: swapping does not buy the agent more room.
        if (await exists(path.join(dir, "memory.memsw.limit_in_bytes")))
          await write(dir, "memory.memsw.limit_in_bytes", String(limits.memoryBytes));
      }
    }
    return { version: 1, dirs: made };
  } catch (err) {
    await removeCgroup({ version: 1, dirs: made }).catch(() => undefined);
    throw err;
  }
}

/**
 * cgroup v2 forbids enabling controllers below a cgroup that holds processes (ours does), except
 * at the hierarchy's root: so below our own cgroup only where pids and memory are delegated to it
 * already, else (as root) below the root, where systemd keeps both enabled.
 */
function v2Bases(own: string): string[] {
  return [...new Set([path.join(ROOT, own), ROOT])];
}

async function makeV2(own: string, name: string, limits: CgroupLimits): Promise<Cgroup> {
  const enabled = async (dir: string) =>
    (await fs.readFile(path.join(dir, "cgroup.subtree_control"), "utf8").catch(() => "")).split(/\s+/);
  const delegated = (list: string[]) => list.includes("pids") && list.includes("memory");
  let base: string | null = null;
  const refusals: string[] = [];
  for (const candidate of v2Bases(own)) {
    if (delegated(await enabled(candidate))) {
      base = candidate;
      break;
    }
    const refused = await write(candidate, "cgroup.subtree_control", "+pids +memory").then(
      () => null,
      (err: Error) => err.message,
    );
    if (refused === null) {
      base = candidate;
      break;
    }
    refusals.push(`${candidate}: ${refused}`);
  }
  if (base === null) {
    throw new Error(
      `cgroup v2: pids and memory cannot be enabled below ${refusals.join("; ")}; run under a cgroup with Delegate=yes`,
    );
  }
  const parent = path.join(base, "benchflow");
  await fs.mkdir(parent, { recursive: true }).catch(() => undefined);
  if (!delegated(await enabled(parent))) await write(parent, "cgroup.subtree_control", "+pids +memory");
  const dir = path.join(parent, name);
  await mkdirCgroup(dir);
  try {
    await write(dir, "pids.max", String(limits.pids));
    await write(dir, "memory.max", String(limits.memoryBytes));
    if (await exists(path.join(dir, "memory.swap.max"))) await write(dir, "memory.swap.max", "0");
  } catch (err) {
    await removeCgroup({ version: 2, dirs: [dir] }).catch(() => undefined);
    throw err;
  }
  return { version: 2, dirs: [dir] };
}

/**
 * The cgroup folders a sandbox named `name` would have below our own cgroup (its verifier runs'
 * too): for a reaper that has lost the sandbox's record of them.
 */
export async function cgroupDirsNamed(name: string): Promise<string[]> {
  const own = await ownPaths();
  const v2 = await exists(path.join(ROOT, "cgroup.controllers"));
  const parents = v2
    ? v2Bases(own.get("") ?? "/").map((b) => path.join(b, "benchflow"))
    : ["pids", "memory"].map((c) => path.join(ROOT, c, own.get(c) ?? "/", "benchflow"));
  const found: string[] = [];
  for (const parent of parents) {
    for (const entry of await fs.readdir(parent).catch(() => [] as string[])) {
      if (entry === name || entry.startsWith(`${name}-verifier`)) found.push(path.join(parent, entry));
    }
  }
  return found;
}

async function mkdirCgroup(dir: string): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.mkdir(dir);
}

/**
 * The argv that runs `argv` inside the cgroup: sh joins it (cgroup.procs takes the writer's pid)
 * and execs the tool, so nothing the tool starts is ever outside. Refuses to run if it cannot join.
 */
export function joinCgroupArgv(cgroup: Cgroup, argv: string[]): string[] {
  const procs = cgroup.dirs.map((d) => path.join(d, "cgroup.procs"));
  const script =
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ >"$1" || { echo "benchflow: cannot join the sandbox cgroup $1" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';
  return ["/bin/sh", "-c", script, "bf-cgroup", String(procs.length), ...procs, ...argv];
}

/** Which limits the cgroup's processes went past: fork refused at pids.max, the OOM killer ran. */
export async function cgroupExceeded(cgroup: Cgroup): Promise<{ pids: boolean; memory: boolean }> {
  const count = async (file: string, key: string) => {
    const text = await fs.readFile(file, "utf8").catch(() => "");
    return Number(new RegExp(`^${key} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  };
  let pids = false;
  let memory = false;
  for (const dir of cgroup.dirs) {
    if (await exists(path.join(dir, "pids.events")))
      pids ||= (await count(path.join(dir, "pids.events"), "max")) > 0;
    if (cgroup.version === 1 && (await exists(path.join(dir, "memory.oom_control"))))
      memory ||= (await count(path.join(dir, "memory.oom_control"), "oom_kill")) > 0;
    if (cgroup.version === 2) {
      const events = path.join(dir, "memory.events");
      memory ||= (await count(events, "oom_kill")) > 0 || (await count(events, "oom")) > 0;
    }
  }
  return { pids, memory };
}

/** Kills what is left inside (nothing, normally: every exec's tree ends with it), then removes the folders. */
export async function removeCgroup(cgroup: Cgroup): Promise<void> {
  for (const dir of cgroup.dirs) await removeCgroupDir(dir);
}

export async function removeCgroupDir(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const procs = await fs.readFile(path.join(dir, "cgroup.procs"), "utf8").catch(() => null);
    if (procs === null) return; // already gone
    for (const pid of procs.split("\n").filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {}
    }
    try {
      await fs.rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY") throw err;
    }
    // Killed processes take a moment to leave; bounded, never a hang.
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`cgroup ${dir} still holds processes`);
}

async function write(dir: string, file: string, value: string): Promise<void> {
  await fs.writeFile(path.join(dir, file), value);
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
