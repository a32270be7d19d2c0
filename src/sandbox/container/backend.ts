// `--sandbox container`: each trial in its own container from the task's image, on whichever
// engine answers (Docker, or Podman's Docker-compatible service). A task with a compose file
// (environment/docker-compose.yaml) gets its sidecars too, on one network per trial (compose/).
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { Readable } from "node:stream";
import { CategorizedError, messageOf } from "../../errors.js";
import { composeFileOf } from "../../task/intent.js";
import { type Task, workspaceOf } from "../../task/types.js";
import { hostBlockWarning } from "../host-block.js";
import type { HostBlockRecord, SandboxBackend, SandboxSpec } from "../types.js";
import { serviceImage } from "./compose/images.js";
import { ComposeError, type ComposeProject, loadCompose, MAIN_SERVICE } from "./compose/model.js";
import { ComposeRun } from "./compose/project.js";
import { connectEngine, type Engine } from "./engine/engine.js";
import { type AgentBundleMount, resolveAgentImage } from "./image/agent-image.js";
import { buildTaskImage } from "./image/image.js";
import { LABEL, ownerLabels, reapOrphans, removeContainer } from "./lifecycle/cleanup.js";
import { closeHostFor } from "./lifecycle/host-block.js";
import { planNetwork, relayPrecheck } from "./lifecycle/network.js";
import { type HostService, type Relay, relayUnavailableReason, startRelay } from "./lifecycle/relay.js";
import { ContainerSandbox } from "./lifecycle/sandbox.js";
import { awaitSetup, setupCommand } from "./lifecycle/setup.js";

export interface ContainerSandboxSpec extends SandboxSpec {
  /** One server on the host the sandbox may reach (the model gateway); its URL goes in BENCHFLOW_GATEWAY_URL. */
  hostService?: HostService;
}

export interface ContainerBackendOptions {
  /** The engine's address (as DOCKER_HOST would give it); defaults to DOCKER_HOST or the usual sockets. */
  dockerHost?: string;
  /** Build logs go to <buildLogDir>/<task>.log. */
  buildLogDir?: string;
  /** The `benchflow.run` label (defaults to this process's run id). */
  runId?: string;
  /** The user the agent runs as: "agent" by default; "root" for none. Overrides the task's agent.user. */
  agentUser?: string;
  /** Applies to every sandbox this backend makes, unless the spec names its own. */
  hostService?: HostService;
  onBuildProgress?: (task: string, line: string) => void;
  /** How long the container's setup may take to report (default 60 s), ENTRYPOINT included. */
  setupTimeoutSec?: number;
}

export class ContainerBackend implements SandboxBackend {
  readonly kind = "container" as const;
  private readonly live = new Set<ContainerSandbox>();

  constructor(private readonly options: ContainerBackendOptions = {}) {}

  private engine(): Promise<Engine> {
    const { dockerHost } = this.options;
    return connectEngine(dockerHost ? { ...process.env, DOCKER_HOST: dockerHost } : process.env);
  }

  async unavailableReason(): Promise<string | null> {
    try {
      await this.engine();
      return null;
    } catch (err) {
      return messageOf(err);
    }
  }

  async reap(): Promise<string[]> {
    const removed = await reapOrphans(await this.engine());
    return removed.length > 0
      ? [`removed ${removed.length} container(s) and network(s) left by runs that died`]
      : [];
  }

  /** The sandboxes made and not yet stopped (for an interrupt path). */
  liveSandboxes(): ContainerSandbox[] {
    return [...this.live];
  }

  async create(spec: ContainerSandboxSpec): Promise<ContainerSandbox> {
    const engine = await this.engine();
    const { task } = spec;
    const logDir = spec.jobDir ? path.join(spec.jobDir, "builds") : this.options.buildLogDir;
    const logFile = logDir ? path.join(logDir, `${task.name}.log`) : undefined;
    const onProgress = this.options.onBuildProgress;
    const project = await composeProjectOf(task);
    // The task's image and its sidecars' images build side by side.
    const [{ image: taskImage }, sidecarImages] = await Promise.all([
      buildTaskImage(task, {
        engine,
        logFile,
        onProgress: onProgress ? (line) => onProgress(task.name, line) : undefined,
      }),
      project ? sidecarImagesOf(engine, task, project, logDir) : new Map<string, string>(),
    ]);
    if ((spec.readOnlyMounts?.length ?? 0) > 0 && !engine.isLocal) {
      throw new CategorizedError(
        "sandbox_setup",
        `the engine at ${engine.socket} is not on this machine, so host folders cannot be mounted into its containers`,
      );
    }
    // An agent bundle the image cannot run (C library mismatch) is installed into a derived image instead.
    const agentImage = await resolveAgentImage(
      engine,
      taskImage,
      (spec.readOnlyMounts ?? []) as AgentBundleMount[],
      {
        taskName: task.name,
        logDir,
      },
    );
    const image = agentImage.image;
    const service = spec.hostService ?? this.options.hostService;
    const net = planNetwork(engine, spec.network, service);
    if (project && service && !net.relay) {
      throw new CategorizedError(
        "sandbox_setup",
        `task ${task.name} has ${path.basename(project.file)}: its containers share one network, and the model gateway is reached from it only through the relay, which cannot run here (${relayPrecheck(engine) ?? "no relay"})`,
      );
    }
    const enforcement = net.enforcement;
    const workdir = workspaceOf(task);
    const requested = this.options.agentUser ?? task.config.agent.user ?? "agent";
    const agentUser = requested === "root" ? null : requested;
    // main's environment from the compose file, under the task's and ours (as Harbor's overlays do).
    const env: Record<string, string> = {
      ...project?.main.environment,
      ...task.config.sandbox.env,
      ...spec.env,
    };
    if (service && net.directUrl) env.BENCHFLOW_GATEWAY_URL = net.directUrl;
    if (service && net.relay) env.BENCHFLOW_GATEWAY_URL = `http://127.0.0.1:${service.port}`;
    const name = containerName(spec.rolloutName);
    const labels = {
      ...ownerLabels(this.options.runId),
      [LABEL.job]: spec.jobName,
      [LABEL.trial]: spec.rolloutName,
      [LABEL.task]: task.name,
    };
    const compose = project
      ? new ComposeRun({
          engine,
          taskName: task.name,
          project,
          images: sidecarImages,
          namePrefix: name,
          labels,
          internal: !spec.network,
        })
      : null;
    let relay: Relay | null = null;
    let id: string | null = null;
    let agentHome = "";
    let output: Readable | null = null;
    let hostBlock: HostBlockRecord | null = null;
    const main = {
      create: async () => {
        id = await createContainer(engine, {
          name,
          image,
          workdir,
          command: setupCommand(agentUser, workdir),
          env,
          networkMode: compose ? compose.network : net.mode,
          aliases: compose ? [MAIN_SERVICE] : [],
          binds: agentImage.mounts.map((m) => `${m.hostPath}:${m.sandboxPath}:ro`),
          cpus: task.config.sandbox.cpus,
          memoryMb: task.config.sandbox.memoryMb,
          labels,
        });
        // Attached before it starts, so none of the setup's report is missed.
        output = await engine.client.call("POST", `/containers/${id}/attach`, {
          query: { stream: true, stdout: true, stderr: true },
        });
      },
      start: async () => {
        await engine.client.send("POST", `/containers/${id}/start`);
        agentHome = await awaitSetup(output as Readable, {
          timeoutMs: (this.options.setupTimeoutSec ?? 60) * 1000,
          entrypointOf: () => imageEntrypoint(engine, image),
        });
        if (net.relay && service) relay = await startRelayFor(engine, id as unknown as string, service);
        const mode = compose ? compose.network : net.mode;
        hostBlock = await closeHostFor(engine, id as unknown as string, mode, spec.policyEndpoint);
      },
    };
    try {
      if (compose) await compose.up(main);
      else {
        await main.create();
        await main.start();
      }
      const sandbox: ContainerSandbox = new ContainerSandbox({
        engine,
        id: id as unknown as string,
        name,
        image,
        workdir,
        agentUser,
        agentHome,
        gatewayUrl: env.BENCHFLOW_GATEWAY_URL ?? null,
        networkEnforcement: enforcement,
        hostBlock: hostBlock as HostBlockRecord | null,
        warnings: [
          ...(hostBlock ? [hostBlockWarning(hostBlock)].filter((w) => w !== null) : []),
          ...(enforcement.startsWith("not_enforced") ? [`network: ${enforcement}`] : []),
          ...agentImage.warnings,
          ...(project?.warnings ?? []),
        ],
        relay,
        remove: compose ? () => compose.down(id) : undefined,
        onStop: () => this.live.delete(sandbox),
      });
      this.live.add(sandbox);
      return sandbox;
    } catch (err) {
      (output as Readable | null)?.destroy();
      await (relay as Relay | null)?.close().catch(() => undefined);
      if (compose) await compose.down(id).catch(() => undefined);
      else if (id) await removeContainer(engine, id).catch(() => undefined);
      throw err instanceof CategorizedError
        ? err
        : new CategorizedError(
            "sandbox_setup",
            `task ${task.name}: starting its container failed: ${messageOf(err)}`,
            {
              cause: err,
            },
          );
    }
  }
}

/** The task's compose file read and checked, or null when it has none; a bad file is task_error. */
async function composeProjectOf(task: Task): Promise<ComposeProject | null> {
  const file = await composeFileOf(task.environmentDir);
  if (!file) return null;
  try {
    return await loadCompose(file, { ...process.env, ...task.config.sandbox.env });
  } catch (err) {
    if (err instanceof ComposeError)
      throw new CategorizedError("task_error", `task ${task.name}: ${err.message}`);
    throw err;
  }
}

async function sidecarImagesOf(
  engine: Engine,
  task: Task,
  project: ComposeProject,
  logDir: string | undefined,
): Promise<Map<string, string>> {
  const images = await Promise.all(
    project.sidecars.map(async (s) => [s.name, await serviceImage(engine, task, s, { logDir })] as const),
  );
  return new Map(images);
}

async function imageEntrypoint(engine: Engine, image: string): Promise<string[] | null> {
  const info = await engine.client.json<{ Config?: { Entrypoint?: string[] | null } }>(
    "GET",
    `/images/${encodeURIComponent(image)}/json`,
  );
  return info.Config?.Entrypoint ?? null;
}

function containerName(rolloutName: string): string {
  const base = rolloutName
    .replace(/[^a-zA-Z0-9_.-]+/g, "-")
    .replace(/^[^a-zA-Z0-9]+/, "")
    .slice(0, 60);
  return `bf-${base || "trial"}-${randomBytes(3).toString("hex")}`;
}

interface CreateRequest {
  name: string;
  image: string;
  workdir: string;
  command: string[];
  env: Record<string, string>;
  networkMode: string;
  /** Names the container answers to on its network (compose: "main"). */
  aliases: string[];
  /** HostConfig.Binds ("host:container:ro"); they need a local engine. */
  binds: string[];
  cpus: number;
  memoryMb: number;
  labels: Record<string, string>;
}

async function createContainer(engine: Engine, r: CreateRequest): Promise<string> {
  const body = {
    Image: r.image,
    // Only the command is ours: the image's ENTRYPOINT runs first and execs it (as in Harbor).
    Cmd: r.command,
    User: "root",
    WorkingDir: r.workdir,
    Env: Object.entries(r.env).map(([k, v]) => `${k}=${v}`),
    Labels: r.labels,
    HostConfig: {
      Init: true,
      NetworkMode: r.networkMode,
      Binds: r.binds.length > 0 ? r.binds : undefined,
      NanoCpus: r.cpus > 0 ? Math.round(r.cpus * 1e9) : undefined,
      Memory: r.memoryMb > 0 ? r.memoryMb * 1024 * 1024 : undefined,
    },
    NetworkingConfig:
      r.aliases.length > 0 ? { EndpointsConfig: { [r.networkMode]: { Aliases: r.aliases } } } : undefined,
  };
  const reply = await engine.client.json<{ Id: string }>("POST", "/containers/create", {
    query: { name: r.name },
    json: body,
  });
  return reply.Id;
}

async function startRelayFor(engine: Engine, id: string, service: HostService): Promise<Relay> {
  const info = await engine.client.json<{ State?: { Pid?: number } }>("GET", `/containers/${id}/json`);
  const pid = info.State?.Pid ?? 0;
  const why = relayUnavailableReason(pid, engine.isLocal);
  if (why) throw new Error(`cannot connect the sandbox to the gateway: ${why}`);
  return startRelay(pid, service);
}
