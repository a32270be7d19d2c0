// One namespace sandbox: a scratch tree on the host that every exec mounts as "/", with the host's
// system folders read-only on top. Nothing runs between execs, except, for a sandbox with network,
// its network namespace's holder and slirp4netns (netns.ts), which stop() ends. Where the host is
// root and a gateway is named, every exec joins a held namespace (loopback only without network) in
// which the trusted gateway relay listens (relay.ts): the gateway then knows the agent's own calls.
import path from "node:path";
import { workspaceOf } from "../../task/types.js";
import { hostBlockRecordOf, hostBlockWarning } from "../host-block.js";
import { type Relay, startRelay } from "../relay.js";
import type {
  DownloadOptions,
  ExecOptions,
  ExecResult,
  HostBlockRecord,
  Sandbox,
  SandboxLimits,
  SandboxSpec,
} from "../types.js";
import { AGENT_HOME, AGENT_NAME, hostUserName, SANDBOX_PATH } from "./host.js";
import type { SandboxResources } from "./limits.js";
import { type SandboxNetwork, startLoopbackNetwork, startSandboxNetwork } from "./netns.js";
import type { TreeView } from "./paths.js";
import type { ExecPlan } from "./plan.js";
import type { ToolSetup } from "./probe.js";
import { runContained } from "./run.js";
import { removeTree } from "./scratch.js";
import type { Ownership } from "./transfer.js";
import * as transfer from "./transfer.js";

export interface SandboxParts {
  spec: SandboxSpec;
  setup: ToolSetup;
  dir: string;
  view: TreeView;
  fileOverrides: ExecPlan["fileOverrides"];
  ownership: Ownership;
  warnings: string[];
  resources: SandboxResources;
  /** The task asked for a root agent ([agent] user = "root"). */
  rootAgent: boolean;
  /** Execs join held namespaces with the trusted gateway relay in them (host root, a gateway named). */
  relayed: boolean;
}

interface Running {
  user: "agent" | "root";
  kill: () => void;
  done: Promise<unknown>;
}

export class NamespaceSandbox implements Sandbox {
  readonly kind = "namespace" as const;
  readonly id: string;
  readonly workdir: string;
  readonly agentIsNonRoot: boolean;
  /** Things this sandbox cannot do as the task asks (COPY into /usr, agent as root, ...). */
  readonly warnings: string[];
  readonly hostWarnings: readonly string[];
  readonly limits: SandboxLimits;
  /** "bwrap" or "unshare". */
  readonly tool: string;
  private readonly running = new Set<Running>();
  private stopping: Promise<void> | undefined;
  /** The network of the execs that follow (the baseline, or a phase's override). */
  private network: boolean;
  private ownNetwork: Promise<SandboxNetwork> | null = null;
  private loopback: Promise<SandboxNetwork> | null = null;
  private readonly relays = new Map<SandboxNetwork, Promise<Relay>>();
  private blocked: HostBlockRecord | null = null;
  /** The gateway as the agent reaches it, where the trusted relay carries it; else the agent brings a forwarder. */
  readonly gatewayUrl: string | null;
  readonly attributesCalls: boolean;

  constructor(private readonly parts: SandboxParts) {
    this.id = parts.dir;
    this.workdir = workspaceOf(parts.spec.task);
    const { identity } = parts.setup;
    this.agentIsNonRoot = parts.rootAgent ? false : identity.hostRoot ? identity.agent !== null : true;
    this.warnings = parts.warnings;
    this.hostWarnings = parts.resources.warnings;
    this.limits = parts.resources.limits;
    this.tool = parts.setup.tool;
    this.network = parts.spec.network;
    const service = parts.spec.hostService;
    this.gatewayUrl = parts.relayed && service ? `http://127.0.0.1:${service.port}` : null;
    this.attributesCalls = parts.relayed && service?.originKey !== undefined;
  }

  /** The held namespace an exec with (or without) network joins, its relay listening; null: none is held. */
  private async heldNetwork(network: boolean): Promise<SandboxNetwork | null> {
    if (!network && !this.parts.relayed) return null;
    const net = await (network ? this.startNetwork() : this.startLoopback());
    const service = this.parts.spec.hostService;
    if (this.parts.relayed && service) {
      if (!this.relays.has(net)) this.relays.set(net, startRelay(net.holderPid, service));
      await this.relays.get(net);
    }
    return net;
  }

  /** Holds what the task's phases will use before the first exec, so what cannot be made refuses the rollout now. */
  async prepareNetworks(anyPhaseHasNetwork: boolean): Promise<void> {
    await this.heldNetwork(this.network);
    if (anyPhaseHasNetwork) await this.heldNetwork(true);
    if (this.parts.relayed) await this.heldNetwork(false);
  }

  private startLoopback(): Promise<SandboxNetwork> {
    if (this.loopback === null) {
      this.loopback = startLoopbackNetwork(this.parts.spec.policyEndpoint);
      this.loopback.catch(() => {
        this.loopback = null;
      });
    }
    return this.loopback;
  }

  /** Network on is a namespace of the sandbox's own (netns.ts), started when first needed. */
  startNetwork(): Promise<SandboxNetwork> {
    if (this.ownNetwork === null) {
      const { spec, setup } = this.parts;
      this.ownNetwork = startSandboxNetwork(setup.identity.hostRoot, spec.policyEndpoint);
      this.ownNetwork.then(
        (n) => {
          this.blocked = n.hostBlock;
          const warning = hostBlockWarning(n.hostBlock);
          if (warning) this.warnings.push(warning);
        },
        () => {
          this.ownNetwork = null;
        },
      );
    }
    return this.ownNetwork;
  }

  /** Without a network of its own the sandbox has only loopback: nothing on the host to close. */
  get hostBlock(): HostBlockRecord {
    return this.blocked ?? hostBlockRecordOf(this.parts.spec.policyEndpoint, "no_network");
  }

  /** A phase's network ([agent] / [verifier] network_mode): each exec picks its namespace anyway. */
  async setNetwork(network: boolean): Promise<void> {
    if (network) await this.startNetwork();
    this.network = network;
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.stopping) throw new Error(`sandbox ${this.id} is stopped`);
    const user = options.user ?? "agent";
    const { hostRoot } = this.parts.setup.identity;
    const rootAgent = user === "agent" && this.parts.rootAgent;
    const { resources } = this.parts;
    const plan: ExecPlan = {
      fsRoot: this.parts.view.fsRoot,
      system: this.parts.view.system,
      fileOverrides: this.parts.fileOverrides,
      hidden: this.parts.view.hidden,
      network: this.network,
      cwd: path.posix.resolve(this.workdir, options.cwd ?? "."),
      // A root agent without host root is the user namespace's root, as root execs are.
      user: rootAgent && !hostRoot ? "root" : user,
      agentUserns: rootAgent && hostRoot,
      env: this.envFor(user, options.env),
      command: `${resources.commandPrefix}${command}`,
    };
    const held = await this.heldNetwork(plan.network);
    // In a held namespace the tool must not make one of its own: network here means "joined".
    plan.network = held !== null;
    const invocation = this.parts.setup.invocationFor(plan);
    if (held) invocation.argv = [...held.joinPrefix, ...invocation.argv];
    invocation.argv = resources.wrap(invocation.argv);
    let entry: Running | undefined;
    const result = runContained(invocation, {
      env: { PATH: SANDBOX_PATH },
      timeoutSec: options.timeoutSec ?? null,
      signal: options.signal,
      maxOutputBytes: options.maxOutputBytes,
      onStart: (kill) => {
        entry = { user, kill, done: Promise.resolve() };
        this.running.add(entry);
        return () => entry && this.running.delete(entry);
      },
    });
    if (entry) entry.done = result.catch(() => {});
    return result;
  }

  private envFor(user: "agent" | "root", extra: Record<string, string> | undefined): Record<string, string> {
    const { spec, setup } = this.parts;
    const { hostRoot, agent } = setup.identity;
    const name =
      user === "root" || this.parts.rootAgent || (hostRoot && agent === null)
        ? "root"
        : hostRoot
          ? AGENT_NAME
          : hostUserName();
    return {
      PATH: SANDBOX_PATH,
      // A root agent keeps the agent's home: /root belongs to the verifier's root.
      HOME: user === "root" ? "/root" : AGENT_HOME,
      USER: name,
      LOGNAME: name,
      LANG: "C.UTF-8",
      TERM: "dumb",
      ...spec.task.dockerfile?.env,
      ...spec.task.config.sandbox.env,
      ...spec.env,
      ...extra,
    };
  }

  async upload(hostPath: string, sandboxPath: string): Promise<void> {
    this.assertLive();
    await transfer.upload(this.parts.view, hostPath, sandboxPath, { ownership: this.parts.ownership });
  }

  async download(sandboxPath: string, hostPath: string, options?: DownloadOptions): Promise<void> {
    this.assertLive();
    await transfer.download(this.parts.view, sandboxPath, hostPath, options);
  }

  /** Each exec has its own pid namespace, so a finished exec leaves nothing; this ends agent execs still running. */
  async killAgentProcesses(): Promise<void> {
    const agentRuns = [...this.running].filter((r) => r.user === "agent");
    for (const run of agentRuns) run.kill();
    await Promise.all(agentRuns.map((r) => r.done));
  }

  /** The verifier's own cgroup; which limits the agent went past (limits.ts). */
  async prepareVerifier(): Promise<void> {
    await this.parts.resources.prepareVerifier();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const runs = [...this.running];
      for (const run of runs) run.kill();
      await Promise.all(runs.map((r) => r.done));
      for (const relay of this.relays.values()) await relay.then((r) => r.close()).catch(() => undefined);
      for (const net of [this.ownNetwork, this.loopback])
        await net?.then((n) => n.close()).catch(() => undefined);
      // Cgroups and the disk first: the tree lives on that disk.
      await this.parts.resources.release();
      await removeTree(this.parts.dir);
    })();
    return this.stopping;
  }

  private assertLive(): void {
    if (this.stopping) throw new Error(`sandbox ${this.id} is stopped`);
  }
}
