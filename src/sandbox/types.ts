// The hinge between one rollout and the machine it runs on. Backends: namespace (bubblewrap or
// unshare, no daemon) and container (Docker Engine API). Helpers that need more than these verbs
// take a Sandbox as an argument; the interface does not grow.
import type { Task } from "../task/types.js";

export type SandboxKind = "namespace" | "container";

/** Processes a sandbox may hold at once when the task names no limit of its own. */
export const DEFAULT_PIDS_LIMIT = 4096;

/**
 * The most bytes one download writes on the host unless the caller says otherwise (agent logs,
 * artifacts, the verifier's folder): past it files are cut and the cut is recorded (see
 * src/util/copy-out.ts).
 */
export const DEFAULT_DOWNLOAD_MAX_BYTES = 512 * 1024 * 1024;

export interface DownloadOptions {
  /** Bytes really written on the host (zeros of a sparse file are holes and count nothing). */
  maxBytes?: number;
}

/** One resource limit: what the task asked, and how (or whether) the backend applied it. */
export interface LimitRecord {
  /** The task's value (MB for memory and storage, a count for pids), or null when it names none. */
  requested: number | null;
  /** How it holds: "cgroup", "rlimit", "filesystem", "engine", "watched", or "not_applied: <why>". */
  applied: string;
  /** Set once the agent went past it (the rollout is still scored: that is the policy's doing). */
  exceeded?: boolean;
}

/** What a sandbox enforces; recorded in config.json as `limits`. */
export type SandboxLimits = Partial<Record<"memory_mb" | "storage_mb" | "pids" | "cpus", LimitRecord>>;

/** The server the gateway calls for the policy (from its base URL). */
export interface PolicyEndpoint {
  host: string;
  port: number;
}

/** What the sandbox closed around the gateway (host-block.ts); recorded in config.json as `host_block`. */
export interface HostBlockRecord {
  /** How many of the host's own addresses the agent cannot reach (any port but DNS). */
  addresses: number;
  /** The policy endpoint ("host:port") closed too, or null when the job names none. */
  endpoint: string | null;
  /** "nft", "iptables", "no_network" (nothing to close), or "not_applied: <why>". */
  applied: string;
  /**
   * The host's own guard (host-guard.ts), which closes every host address, those that appear later
   * included: "nft", or "not_applied: <why>" (then only the addresses counted above are closed).
   * Absent where the sandbox has no network.
   */
  guard?: string;
}

export interface ExecOptions {
  /** Wall-clock limit; on expiry the whole process tree is killed. Omitted or null: no limit. */
  timeoutSec?: number | null;
  /** "agent" runs as the sandbox's non-root user where the backend allows; "root" as root. */
  user?: "agent" | "root";
  env?: Record<string, string>;
  /** Working directory inside the sandbox; defaults to the workspace. */
  cwd?: string;
  /** Aborting kills the process tree, like a timeout (the result says which). */
  signal?: AbortSignal;
  /** Keep at most this many bytes of stdout and of stderr (the tail). Default 1 MiB. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  /** null when the process was killed (timeout or abort). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

/** A host folder or file shown read-only inside the sandbox (an agent bundle, say). */
export interface ReadOnlyMount {
  hostPath: string;
  /** Absolute; outside the folders the backend shows from the host (/usr, /etc, ...). */
  sandboxPath: string;
}

export interface SandboxSpec {
  task: Task;
  /** Names for labels, logs and messages. */
  jobName: string;
  rolloutName: string;
  /** Network for the agent: false gives loopback only. */
  network: boolean;
  /** Extra environment for every exec (the task's ENV is applied by the backend). */
  env?: Record<string, string>;
  /** The job folder: backends keep their logs there (image builds in builds/). */
  jobDir?: string;
  /**
   * One server on the host the sandbox may reach even without network (the model gateway); with its
   * origin key, the relay tells it which process in the sandbox made each call (relay.ts).
   */
  hostService?: { port: number; host?: string; originKey?: string };
  /** Host paths bound read-only into the sandbox, so nothing is copied per rollout. */
  readOnlyMounts?: ReadOnlyMount[];
  /** The policy endpoint, closed to the agent like the host's own addresses (it must use the gateway). */
  policyEndpoint?: PolicyEndpoint;
}

export interface Sandbox {
  readonly kind: SandboxKind;
  /** A backend-specific id (container id, scratch folder) recorded as `sandbox_id`. */
  readonly id: string;
  /** The workspace path inside the sandbox (the task's workdir, or /app). */
  readonly workdir: string;
  /** Whether the agent really runs as a non-root user here. */
  readonly agentIsNonRoot: boolean;
  /** What the backend could not apply as the task asked (recorded in config.json, shown once). */
  readonly warnings?: string[];
  /**
   * Those of `warnings` about this host or engine rather than the task (a disk cap the engine cannot
   * set, no cgroup): the same for every task, so a run says each once, without a task's name.
   */
  readonly hostWarnings?: readonly string[];
  /** How "no network" is enforced: "enforced", "public", or "not_enforced: <why>". */
  readonly networkEnforcement?: string;
  /** The host service's address as seen from inside (BENCHFLOW_GATEWAY_URL), when one was asked for. */
  readonly gatewayUrl?: string | null;
  /**
   * Whether the gateway learns which process in the sandbox made each call (the trusted relay): the
   * agent's launcher then declares itself before the agent starts (trusted-forwarder.cjs).
   */
  readonly attributesCalls?: boolean;
  /** What is closed around the gateway: the host's addresses and the policy endpoint (host-block.ts). */
  readonly hostBlock?: HostBlockRecord;
  /** The image the sandbox runs (container backends). */
  readonly image?: string;
  /** The limits applied (and, after the agent, which it went past); read again when the rollout ends. */
  readonly limits?: SandboxLimits;
  /** Run a shell command line (bash -c) inside the sandbox. */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Copy a host file or folder to a path inside the sandbox (folder contents land under sandboxPath). */
  upload(hostPath: string, sandboxPath: string): Promise<void>;
  /**
   * Copy a sandbox file or folder out to a host path. Missing source: no error, nothing copied.
   * Bounded: at most `maxBytes` written (default DEFAULT_DOWNLOAD_MAX_BYTES), holes kept, links
   * only inside the copied tree, no special files; what was left out is recorded in
   * `.benchflow-truncated.json` inside the copied folder (after a copied file's name).
   */
  download(sandboxPath: string, hostPath: string, options?: DownloadOptions): Promise<void>;
  /**
   * The network of the execs that follow, where a phase overrides the task's baseline ([agent] or
   * [verifier] network_mode). Absent where the backend cannot switch it during a rollout.
   */
  setNetwork?(network: boolean): Promise<void>;
  /** Kill every process the agent left behind (before the verifier runs). */
  killAgentProcesses(): Promise<void>;
  /**
   * Called after killAgentProcesses and before the verifier's first exec: the backend gives the
   * verifier room of its own (a disk the agent filled, a process or memory budget the agent spent)
   * and settles `limits[...].exceeded`. Absent: nothing to do.
   */
  prepareVerifier?(): Promise<void>;
  /** Remove the sandbox and everything in it. Safe to call twice. */
  stop(): Promise<void>;
}

export interface SandboxBackend {
  readonly kind: SandboxKind;
  /** Why this backend cannot run here, or null when it can. */
  unavailableReason(): Promise<string | null>;
  create(spec: SandboxSpec): Promise<Sandbox>;
  /** Before a run: remove what runs that died left behind. Returns what was done, for the user. */
  reap?(): Promise<string[]>;
  /**
   * Whether its sandboxes bring their own way to the model gateway (a container's relay, the
   * namespace sandbox's trusted relay as root); when false, an agent inside brings a forwarder.
   */
  relaysGateway?(): Promise<boolean>;
}

/** A sandbox that could not be made: the rollout ends with `sandbox_setup`. */
export class SandboxSetupError extends Error {
  override name = "SandboxSetupError";
}
