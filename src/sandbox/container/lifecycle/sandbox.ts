// One rollout's container: the Sandbox verbs over the engine API. Files move through the archive
// endpoints; commands through exec; stop() removes the container and everything in it (and a
// compose rollout's sidecars and network).
import { promises as fs } from "node:fs";
import path from "node:path";
import { CopyOut } from "../../copy-out.js";
import type { GuardLease } from "../../host-guard.js";
import type { Relay } from "../../relay.js";
import {
  DEFAULT_DOWNLOAD_MAX_BYTES,
  type DownloadOptions,
  type ExecOptions,
  type ExecResult,
  type HostBlockRecord,
  type Sandbox,
  type SandboxLimits,
} from "../../types.js";
import { EngineError } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { execInContainer, execQuiet } from "../engine/exec.js";
import { extractTo } from "../engine/tar-read.js";
import { entriesOf, tarStream } from "../engine/tar-write.js";
import { removeContainer } from "./cleanup.js";
import { type LimitCounters, readLimitCounters } from "./limits.js";
import { StorageWatch } from "./storage-watch.js";

export interface ContainerSandboxInit {
  engine: Engine;
  id: string;
  name: string;
  image: string;
  workdir: string;
  /** The agent's user name, or null when the agent runs as root. */
  agentUser: string | null;
  agentHome: string;
  gatewayUrl: string | null;
  networkEnforcement: string;
  /** What is closed around the gateway (host-block.ts); null where the container never started. */
  hostBlock?: HostBlockRecord | null;
  warnings: string[];
  /** Those of warnings about the host or engine (Sandbox.hostWarnings). */
  hostWarnings: string[];
  relay: Relay | null;
  /** The host guard's hold on the container's addresses (host-guard.ts), let go once it is removed. */
  guardLease?: GuardLease | null;
  /** What the container was created with (config.json `limits`); `exceeded` is settled before the verifier. */
  limits: SandboxLimits;
  /** The disk limit in bytes; `watched`: during the agent's execs (the engine cannot enforce it). */
  storageLimit: { bytes: number; watched: boolean } | null;
  /** Removes the container with what the rollout has besides it (a compose rollout's sidecars and network). */
  remove?: () => Promise<void>;
  onStop: () => void;
}

export class ContainerSandbox implements Sandbox {
  readonly kind = "container" as const;
  readonly id: string;
  readonly name: string;
  readonly image: string;
  readonly workdir: string;
  readonly agentIsNonRoot: boolean;
  /** The model gateway's address inside the sandbox (also in BENCHFLOW_GATEWAY_URL), if one was named. */
  readonly gatewayUrl: string | null;
  readonly attributesCalls: boolean;
  /** "enforced", "public", or "not_enforced: <why>": for config.json. */
  readonly networkEnforcement: string;
  readonly hostBlock?: HostBlockRecord;
  readonly warnings: string[];
  readonly hostWarnings: readonly string[];
  readonly limits: SandboxLimits;
  private readonly storageWatch: StorageWatch | null;
  private stopping: Promise<void> | null = null;

  constructor(private readonly init: ContainerSandboxInit) {
    this.id = init.id;
    this.name = init.name;
    this.image = init.image;
    this.workdir = init.workdir;
    this.agentIsNonRoot = init.agentUser !== null;
    this.gatewayUrl = init.gatewayUrl;
    this.attributesCalls = init.relay?.attributes ?? false;
    this.networkEnforcement = init.networkEnforcement;
    if (init.hostBlock) this.hostBlock = init.hostBlock;
    this.warnings = init.warnings;
    this.hostWarnings = init.hostWarnings;
    this.limits = init.limits;
    const storage = init.storageLimit;
    this.storageWatch =
      storage === null
        ? null
        : new StorageWatch({
            engine: init.engine,
            id: init.id,
            // An engine's quota is reached, never passed: within 1% of it counts as going past it.
            limitBytes: storage.watched ? storage.bytes : Math.floor(storage.bytes * 0.99),
            onExceeded: () => this.storageExceeded(),
          });
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const asAgent = options.user === "agent";
    const user = asAgent && this.init.agentUser ? this.init.agentUser : "root";
    const identity: Record<string, string> =
      asAgent && this.init.agentUser
        ? { HOME: this.init.agentHome, USER: this.init.agentUser, LOGNAME: this.init.agentUser }
        : {};
    // Marks the agent's processes, so a root agent's leftovers can still be found and killed.
    const role: Record<string, string> = asAgent ? { BENCHFLOW_ROLE: "agent" } : {};
    // The disk is watched while the agent runs: from its first exec (again after each verifier).
    if (asAgent && this.init.storageLimit?.watched) this.storageWatch?.start();
    return execInContainer(this.init.engine, this.id, command, {
      user,
      env: { ...identity, ...role, ...options.env },
      cwd: options.cwd ?? this.workdir,
      timeoutSec: options.timeoutSec,
      signal: options.signal,
      maxOutputBytes: options.maxOutputBytes,
    });
  }

  async upload(hostPath: string, sandboxPath: string): Promise<void> {
    // "dir/" as the target of a single file means "into dir", as with cp.
    const intoFolder = sandboxPath.endsWith("/") && (await fs.stat(hostPath)).isFile();
    const target = path.posix.resolve("/", sandboxPath, intoFolder ? path.basename(hostPath) : ".");
    const entries = await entriesOf(hostPath, target);
    // Extracting at "/" creates missing parents and leaves an existing target folder's owner alone.
    await this.init.engine.client.send("PUT", `/containers/${this.id}/archive`, {
      query: { path: "/" },
      body: tarStream(entries),
      contentType: "application/x-tar",
    });
  }

  async download(sandboxPath: string, hostPath: string, options: DownloadOptions = {}): Promise<void> {
    const out = new CopyOut(sandboxPath, options.maxBytes ?? DEFAULT_DOWNLOAD_MAX_BYTES);
    let res: Awaited<ReturnType<Engine["client"]["call"]>>;
    try {
      res = await this.init.engine.client.call("GET", `/containers/${this.id}/archive`, {
        query: { path: sandboxPath },
      });
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return;
      throw err;
    }
    await fs.mkdir(path.dirname(path.resolve(hostPath)), { recursive: true });
    await extractTo(res, path.resolve(hostPath), out);
    await out.finish(path.resolve(hostPath));
  }

  async killAgentProcesses(): Promise<void> {
    if (this.init.agentUser) {
      // As the agent, `kill -9 -1` reaches every process of that user and nothing else.
      await execQuiet(
        this.init.engine,
        this.id,
        ["sh", "-c", "kill -9 -1; sleep 0.2; kill -9 -1; true"],
        this.init.agentUser,
      );
      return;
    }
    const script = `for round in 1 2; do for d in /proc/[0-9]*; do
  grep -qzx BENCHFLOW_ROLE=agent "$d/environ" 2>/dev/null && kill -9 "\${d#/proc/}" 2>/dev/null; done; sleep 0.2; done; true`;
    await execQuiet(this.init.engine, this.id, ["sh", "-c", script]);
  }

  /** The agent passed a watched disk limit: it is stopped, and the rollout is still scored. */
  private async storageExceeded(): Promise<void> {
    if (this.limits.storage_mb) this.limits.storage_mb.exceeded = true;
    await this.killAgentProcesses();
  }

  /**
   * After the agent's processes are gone: the disk watch stops (the verifier may write past the
   * agent's limit), and which limits the agent went past is read from the container's cgroup.
   */
  async prepareVerifier(): Promise<void> {
    const watch = this.storageWatch;
    const read = () => readLimitCounters(this.init.engine, this.id).catch(() => null);
    let [counters] = await Promise.all([read(), watch?.stop()]);
    const { memory_mb, pids, storage_mb } = this.limits;
    // A fork bomb can hold every pid slot, so that the kill's own exec never started: still full
    // (or not even readable) after the kill, the agent's processes are killed again, with pauses
    // for the init to reap thousands of them, until the verifier's execs have room (a few dozen
    // slots: each exec's runtime forks inside the container's cgroup too).
    const full = (c: LimitCounters | null) =>
      !c?.read || (pids?.requested != null && c.pids != null && c.pids >= pids.requested - 64);
    for (let round = 0; round < 40 && full(counters); round++) {
      if (round > 0) await new Promise((r) => setTimeout(r, 250));
      await this.killAgentProcesses().catch(() => undefined);
      counters = await read();
    }
    // Sticky: a multi-step task's limits say whether any step's agent went past them.
    if (memory_mb && counters?.oomKills != null)
      memory_mb.exceeded = memory_mb.exceeded || counters.oomKills > 0;
    if (pids && counters?.pidsRefused != null) pids.exceeded = pids.exceeded || counters.pidsRefused > 0;
    // Watched: the watch's verdict. Enforced: reached (a layer within 1% of the quota) or not known,
    // since a driver whose size covers the image too (btrfs, zfs) fills before the layer does.
    if (storage_mb && watch && this.init.storageLimit?.watched)
      storage_mb.exceeded = storage_mb.exceeded || watch.exceeded;
    else if (storage_mb && watch?.exceeded) storage_mb.exceeded = true;
  }

  /** The disk watch's measurements so far (for tests and the cost report). */
  storageWatchStats(): { polls: number; pollMs: number; peakBytes: number } | null {
    const w = this.storageWatch;
    return w ? { polls: w.polls, pollMs: w.pollMs, peakBytes: w.peakBytes } : null;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        this.storageWatch?.halt();
        await this.init.relay?.close();
        if (this.init.remove) await this.init.remove();
        else await removeContainer(this.init.engine, this.id);
        // After the container is gone: its address must not be free of the guard while it runs.
        await this.init.guardLease?.release();
      } finally {
        this.init.onStop();
      }
    })();
    return this.stopping;
  }
}
