// The task's limits, as far as the engine applies them: processes (PidsLimit) and memory (Memory,
// with MemorySwap equal so nothing spills to swap) always, the CPU share (NanoCpus), and the disk
// (StorageOpt size) only where the storage driver takes it: overlay on ext4, the usual setup, refuses
// it on Docker and on Podman alike. Where it does not, the disk is watched instead (storage-watch.ts).
// What went past a limit is read from the container's own cgroup counters before the verifier runs.
import type { Task } from "../../../task/types.js";
import { DEFAULT_PIDS_LIMIT, type SandboxLimits } from "../../types.js";
import { EngineError } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { execInContainer } from "../engine/exec.js";
import { ownerLabels, removeContainer } from "./cleanup.js";

/** The HostConfig fields that carry the limits (main's container; sidecars take the first three). */
export interface LimitHostConfig {
  PidsLimit: number;
  Memory?: number;
  MemorySwap?: number;
  NanoCpus?: number;
  StorageOpt?: { size: string };
  ShmSize?: number;
  Sysctls?: Record<string, string>;
}

/** The engines' own /dev/shm size. */
const DEFAULT_SHM_BYTES = 64 * 1024 * 1024;

export interface LimitPlan {
  hostConfig: LimitHostConfig;
  limits: SandboxLimits;
  warnings: string[];
  /** The disk limit in bytes when it is watched rather than enforced by the engine. */
  watchBytes: number | null;
}

/** Whether the engine takes a per-container disk size: answered once per engine (a create and a delete). */
const storageSupport = new Map<string, Promise<string | null>>();

/** Null when the engine accepts StorageOpt size; else its reason (the engine's own words). */
export function storageOptRefusal(engine: Engine, image: string, sizeMb: number): Promise<string | null> {
  let answer = storageSupport.get(engine.socket);
  if (!answer) {
    answer = probeStorageOpt(engine, image, sizeMb);
    storageSupport.set(engine.socket, answer);
  }
  return answer;
}

async function probeStorageOpt(engine: Engine, image: string, sizeMb: number): Promise<string | null> {
  let id: string | null = null;
  try {
    // Created, never started: the storage driver decides at create time. Labelled, so a crash
    // between create and delete leaves nothing that the next run's reaper misses.
    const reply = await engine.client.json<{ Id: string }>("POST", "/containers/create", {
      json: {
        Image: image,
        Cmd: ["true"],
        Labels: ownerLabels(),
        HostConfig: { StorageOpt: { size: `${sizeMb}M` }, NetworkMode: "none" },
      },
    });
    id = reply.Id;
    return null;
  } catch (err) {
    if (err instanceof EngineError) return engineReason(err);
    throw err;
  } finally {
    if (id) await removeContainer(engine, id).catch(() => undefined);
  }
}

/** The engine's message without our request line and without ids (so it reads the same every time). */
export function engineReason(err: EngineError): string {
  const text = err.message.replace(/^[A-Z]+ \S+: \d+ /, "");
  // Podman wraps the driver's words in its own ("creating read-write layer with ID ...: <why>").
  const core = text.includes("--storage-opt") ? text.slice(text.indexOf("--storage-opt")) : text;
  return core.replace(/\b[0-9a-f]{12,}\b/g, "<id>").trim();
}

/** Whether a create failed because of StorageOpt (so it is retried without, and the disk watched). */
export function isStorageOptError(err: unknown): err is EngineError {
  return err instanceof EngineError && /storage-opt|storage_opt|storageopt|quota/i.test(err.message);
}

export interface LimitOptions {
  /** Processes the container may hold (default DEFAULT_PIDS_LIMIT). */
  pidsLimit?: number;
}

/** What main's container is created with, and what config.json `limits` says of it. */
export async function planLimits(
  engine: Engine,
  task: Task,
  image: string,
  options: LimitOptions = {},
): Promise<LimitPlan> {
  const { cpus, memoryMb, storageMb } = task.config.sandbox;
  const pids = options.pidsLimit ?? DEFAULT_PIDS_LIMIT;
  const hostConfig: LimitHostConfig = { PidsLimit: pids };
  const limits: SandboxLimits = { pids: { requested: pids, applied: "engine" } };
  if (memoryMb > 0) {
    hostConfig.Memory = memoryMb * 1024 * 1024;
    // Equal to Memory: no swap beyond the limit, so an allocation past it is killed, not swapped.
    hostConfig.MemorySwap = hostConfig.Memory;
    // Memory that outlives the agent's processes (files in /dev/shm, SysV segments) is charged to
    // the container: were it to fill the limit, the kernel would kill the keep-alive next and every
    // process after it, the verifier's included. /dev/shm holds at most a quarter of the limit, and
    // a SysV segment goes with the last process attached to it.
    hostConfig.ShmSize = Math.min(DEFAULT_SHM_BYTES, Math.floor(hostConfig.Memory / 4));
    hostConfig.Sysctls = { "kernel.shm_rmid_forced": "1" };
    limits.memory_mb = { requested: memoryMb, applied: "engine" };
  } else limits.memory_mb = { requested: null, applied: "not_applied: the task names no memory limit" };
  if (cpus > 0) {
    hostConfig.NanoCpus = Math.round(cpus * 1e9);
    limits.cpus = { requested: cpus, applied: "engine" };
  } else limits.cpus = { requested: null, applied: "not_applied: the task names no CPU limit" };
  const plan: LimitPlan = { hostConfig, limits, warnings: [], watchBytes: null };
  if (storageMb > 0) {
    const refusal = await storageOptRefusal(engine, image, storageMb);
    if (refusal === null) {
      hostConfig.StorageOpt = { size: `${storageMb}M` };
      limits.storage_mb = { requested: storageMb, applied: "engine" };
    } else watchStorage(plan, storageMb, `${engine.name} cannot cap a container's disk here (${refusal})`);
  } else limits.storage_mb = { requested: null, applied: "not_applied: the task names no storage limit" };
  return plan;
}

/** The disk limit watched instead of enforced: the agent is stopped soon after it passes it. */
export function watchStorage(plan: LimitPlan, storageMb: number, why: string): void {
  delete plan.hostConfig.StorageOpt;
  plan.limits.storage_mb = { requested: storageMb, applied: "watched" };
  plan.watchBytes = storageMb * 1024 * 1024;
  // No task name or size in it: one line per run, however many rollouts and tasks meet it.
  plan.warnings.push(
    `storage_mb is watched, not enforced: ${why}; ` +
      "the agent is stopped within about a second of passing it (docs/write-a-task.md, section Resource limits)",
  );
}

/** What the container's cgroup counted: OOM kills, and forks refused at the pids limit. */
export interface LimitCounters {
  oomKills: number | null;
  pidsRefused: number | null;
  /** Processes in the container now. */
  pids: number | null;
  /** The reading exec started and finished (under a fork bomb even starting one can fail). */
  read: boolean;
}

// cgroup v1 (memory.oom_control, pids.events under their controllers) and v2 (one folder).
const COUNTER_FILES = [
  "/sys/fs/cgroup/memory/memory.oom_control",
  "/sys/fs/cgroup/memory.events",
  "/sys/fs/cgroup/pids/pids.events",
  "/sys/fs/cgroup/pids/pids.current",
  "/sys/fs/cgroup/pids.events",
  "/sys/fs/cgroup/pids.current",
];

/** One exec as root reading the counters (the engine's inspect OOMKilled covers init only). */
export async function readLimitCounters(engine: Engine, id: string): Promise<LimitCounters> {
  const script = `for f in ${COUNTER_FILES.join(" ")}; do [ -r "$f" ] && { echo "== $f"; cat "$f"; }; done; true`;
  const r = await execInContainer(engine, id, script, { user: "root", env: {}, cwd: "/", timeoutSec: 30 });
  return { ...parseCounters(r.stdout), read: r.exitCode === 0 };
}

export function parseCounters(text: string): Omit<LimitCounters, "read"> {
  const counters: Omit<LimitCounters, "read"> = { oomKills: null, pidsRefused: null, pids: null };
  let file = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("== ")) {
      file = line.slice(3);
      continue;
    }
    const [key, value] = line.trim().split(/\s+/);
    if (file.endsWith("pids.current") && /^\d+$/.test(key ?? "")) {
      counters.pids = Number(key);
      continue;
    }
    const n = Number(value);
    if (!Number.isFinite(n)) continue;
    if (/memory/.test(file) && key === "oom_kill") counters.oomKills = (counters.oomKills ?? 0) + n;
    if (/pids/.test(file) && key === "max") counters.pidsRefused = (counters.pidsRefused ?? 0) + n;
  }
  return counters;
}
