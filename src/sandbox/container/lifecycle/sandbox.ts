// One trial's container: the Sandbox verbs over the engine API. Files move through the archive
// endpoints; commands through exec; stop() removes the container and everything in it (and a
// compose trial's sidecars and network).
import { promises as fs } from "node:fs";
import path from "node:path";
import { CopyOut } from "../../../util/copy-out.js";
import {
  DEFAULT_DOWNLOAD_MAX_BYTES,
  type DownloadOptions,
  type ExecOptions,
  type ExecResult,
  type HostBlockRecord,
  type Sandbox,
} from "../../types.js";
import { EngineError } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { execInContainer, execQuiet } from "../engine/exec.js";
import { extractTo } from "../engine/tar-read.js";
import { entriesOf, tarStream } from "../engine/tar-write.js";
import { removeContainer } from "./cleanup.js";
import type { Relay } from "./relay.js";

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
  relay: Relay | null;
  /** Removes the container with what the trial has besides it (a compose trial's sidecars and network). */
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
  /** "enforced", "public", or "not_enforced: <why>": for config.json. */
  readonly networkEnforcement: string;
  readonly hostBlock?: HostBlockRecord;
  readonly warnings: string[];
  private stopping: Promise<void> | null = null;

  constructor(private readonly init: ContainerSandboxInit) {
    this.id = init.id;
    this.name = init.name;
    this.image = init.image;
    this.workdir = init.workdir;
    this.agentIsNonRoot = init.agentUser !== null;
    this.gatewayUrl = init.gatewayUrl;
    this.networkEnforcement = init.networkEnforcement;
    if (init.hostBlock) this.hostBlock = init.hostBlock;
    this.warnings = init.warnings;
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

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        await this.init.relay?.close();
        if (this.init.remove) await this.init.remove();
        else await removeContainer(this.init.engine, this.id);
      } finally {
        this.init.onStop();
      }
    })();
    return this.stopping;
  }
}
