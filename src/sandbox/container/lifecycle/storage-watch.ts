// The disk limit where the engine cannot enforce it: while the agent runs, the container's
// writable layer is measured about once a second, and past the limit the agent's processes are
// killed. What the agent writes between two measurements is the overshoot; the verifier, after
// the watch stops, has the disk to itself.
//
// Measuring: on a local engine, `du` over the layer's upper folder on the host (the blocks really
// allocated: a sparse file counts what it holds); it takes about a millisecond for a few thousand
// files. Elsewhere, or when that folder cannot be read, the engine's inspect with size=true (SizeRw),
// which walks the same folder in the daemon at several times the cost (Podman: ~150 ms a call).
// The interval stretches so a measurement never takes more than a twentieth of the time.
//
// Files count as well as bytes: a flood of empty files allocates no blocks but an inode each, on
// the host's filesystem. Where du can read the layer, its inodes are counted too, against one inode
// per 16 KiB of the limit (mke2fs's default ratio: what a disk of that size would hold).
import { execFile } from "node:child_process";
import { constants, promises as fs } from "node:fs";
import type { Engine } from "../engine/engine.js";

const MIN_INTERVAL_MS = 1000;
/** A measurement may take at most 1/COST_SHARE of the wall time. */
const COST_SHARE = 20;
/** After a kill, only a layer that grew by this much more (a survivor still writing) is killed again. */
const REKILL_GROWTH = 16 * 1024 * 1024;
/** Bytes of the limit per inode allowed (mke2fs's default inode ratio). */
export const BYTES_PER_INODE = 16 * 1024;
/** After a kill for files, only a layer with this many more files is killed again. */
const REKILL_FILES = 4096;

export interface StorageWatchInit {
  engine: Engine;
  id: string;
  limitBytes: number;
  /** Stops the agent (the sandbox's killAgentProcesses). */
  onExceeded: () => Promise<void>;
}

export class StorageWatch {
  /** The agent went past the limit (set by the watch or by the last measurement). */
  exceeded = false;
  /** The largest size measured, in bytes. */
  peakBytes = 0;
  /** The most files (inodes) counted in the layer (0 where only the engine's API answers). */
  peakInodes = 0;
  /** Measurements made, and the wall time they took in total (for the cost report). */
  polls = 0;
  pollMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private running = false;
  private killedAt: number | null = null;
  private killedAtInodes: number | null = null;
  private upperDir: Promise<string | null> | null = null;

  constructor(private readonly init: StorageWatchInit) {}

  /** Starts watching (again, after a verifier: a multi-step task's next agent). No-op when running. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.killedAt = null;
    this.killedAtInodes = null;
    this.schedule(0);
  }

  /** Stops watching (a running or an unstarted watch), waits for a measurement under way, then measures once more. */
  async stop(): Promise<void> {
    this.halt();
    await this.inFlight;
    const size = await this.measureAll().catch(() => null);
    if (size !== null) this.note(size);
  }

  /** The files allowed: one per BYTES_PER_INODE of the byte limit. */
  get limitInodes(): number {
    return Math.floor(this.init.limitBytes / BYTES_PER_INODE);
  }

  /** Stops watching at once, measuring nothing more (the sandbox is being removed). */
  halt(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.inFlight = this.poll().finally(() => {
        this.inFlight = null;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const t0 = Date.now();
    let size: { bytes: number; inodes: number | null } | null = null;
    try {
      size = await this.measureAll();
    } catch {
      // The container went away (the rollout is ending): nothing left to watch.
    }
    const cost = Date.now() - t0;
    this.polls++;
    this.pollMs += cost;
    if (size !== null) {
      this.note(size);
      const { bytes, inodes } = size;
      const overBytes =
        bytes > this.init.limitBytes && (this.killedAt === null || bytes > this.killedAt + REKILL_GROWTH);
      const overFiles =
        inodes !== null &&
        inodes > this.limitInodes &&
        (this.killedAtInodes === null || inodes > this.killedAtInodes + REKILL_FILES);
      if (this.running && (overBytes || overFiles)) {
        if (overBytes) this.killedAt = bytes;
        if (overFiles) this.killedAtInodes = inodes;
        await this.init.onExceeded().catch(() => undefined);
      }
    }
    if (this.running) this.schedule(Math.max(MIN_INTERVAL_MS, cost * COST_SHARE));
  }

  private note({ bytes, inodes }: { bytes: number; inodes: number | null }): void {
    this.peakBytes = Math.max(this.peakBytes, bytes);
    this.peakInodes = Math.max(this.peakInodes, inodes ?? 0);
    if (bytes > this.init.limitBytes || (inodes !== null && inodes > this.limitInodes)) this.exceeded = true;
  }

  /** Bytes, and files where du can count them (the layer's folder on this host). */
  private async measureAll(): Promise<{ bytes: number; inodes: number | null } | null> {
    const bytes = await this.measure();
    if (bytes === null) return null;
    const dir = await this.upperDir;
    return { bytes, inodes: dir ? await du(dir, "--inodes") : null };
  }

  /** The writable layer's size in bytes. */
  async measure(): Promise<number | null> {
    const { engine, id } = this.init;
    this.upperDir ??= engine.isLocal ? upperDirOf(engine, id) : Promise.resolve(null);
    const dir = await this.upperDir;
    if (dir) {
      const bytes = await duBytes(dir);
      if (bytes !== null) return bytes;
      this.upperDir = Promise.resolve(null);
    }
    const info = await engine.client.json<{ SizeRw?: number }>("GET", `/containers/${id}/json`, {
      query: { size: true },
    });
    return typeof info.SizeRw === "number" ? info.SizeRw : null;
  }
}

async function upperDirOf(engine: Engine, id: string): Promise<string | null> {
  const info = await engine.client.json<{ GraphDriver?: { Data?: Record<string, string> | null } }>(
    "GET",
    `/containers/${id}/json`,
  );
  const dir = info.GraphDriver?.Data?.UpperDir ?? null;
  // Unreadable (not root) or not on this machine (an engine in a VM behind a local socket): use the API.
  if (
    !dir ||
    !(await fs.access(dir, constants.R_OK | constants.X_OK).then(
      () => true,
      () => false,
    ))
  )
    return null;
  return dir;
}

/** `du -sx -B1`: allocated bytes under dir, or null when du cannot read it (not root, no du). */
function duBytes(dir: string): Promise<number | null> {
  return du(dir, "-B1");
}

/** `du -sx UNIT dir`'s total (bytes with -B1, files with --inodes), or null when du cannot read it. */
function du(dir: string, unit: "-B1" | "--inodes"): Promise<number | null> {
  return new Promise((resolve) => {
    // A file removed while du walks makes it exit 1 with the total still printed: the total counts.
    execFile("du", ["-s", "-x", unit, dir], { timeout: 60_000 }, (_err, stdout) => {
      const n = Number.parseInt(stdout.split("\t")[0] ?? "", 10);
      resolve(Number.isFinite(n) && stdout.includes("\t") ? n : null);
    });
  });
}
