// The container sandbox: each rollout in its own container from the task's image, on whichever
// engine answers (Docker, or Podman's Docker-compatible service). A task with a compose file
// (environment/docker-compose.yaml) gets its sidecars too, on one network per rollout (compose/).
import { randomBytes } from "node:crypto";
import path from "node:path";
import { inheritedEnv } from "../../env.js";
import { CategorizedError, messageOf } from "../../errors.js";
import { composeFileOf } from "../../task/intent.js";
import { type Task, workspaceOf } from "../../task/types.js";
import { hostBlockWarning } from "../host-block.js";
import type { HostService } from "../relay.js";
import type { SandboxBackend, SandboxSpec } from "../types.js";
import { serviceImage } from "./compose/images.js";
import { ComposeError, type ComposeProject, loadCompose, MAIN_SERVICE } from "./compose/model.js";
import { ComposeRun } from "./compose/project.js";
import { connectEngine, type Engine, engineEnv } from "./engine/engine.js";
import { type AgentBundleMount, type AgentImageResult, resolveAgentImage } from "./image/agent-image.js";
import { buildTaskImage } from "./image/image.js";
import { LABEL, ownerLabels, reapOrphans, removeContainer } from "./lifecycle/cleanup.js";
import { type LimitPlan, planLimits } from "./lifecycle/limits.js";
import { type CreateRequest, MainContainerRun } from "./lifecycle/main-container.js";
import { type NetworkPlan, planNetwork, relayPrecheck } from "./lifecycle/network.js";
import { ContainerSandbox, type ContainerSandboxInit } from "./lifecycle/sandbox.js";
import { setupCommand } from "./lifecycle/setup.js";

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
  /** Processes each container may hold (default DEFAULT_PIDS_LIMIT; tests set a small one). */
  pidsLimit?: number;
}

export class ContainerBackend implements SandboxBackend {
  readonly kind = "container" as const;
  private readonly live = new Set<ContainerSandbox>();

  constructor(private readonly options: ContainerBackendOptions = {}) {}

  private engine(): Promise<Engine> {
    const { dockerHost } = this.options;
    return connectEngine(dockerHost ? { DOCKER_HOST: dockerHost } : engineEnv());
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
    const plan = await this.plan(spec);
    const compose = composeRunOf(plan);
    const main = new MainContainerRun({
      engine: plan.engine,
      request: createRequestOf(plan, compose),
      limitPlan: plan.limits,
      storageMb: spec.task.config.sandbox.storageMb,
      setupTimeoutMs: (this.options.setupTimeoutSec ?? 60) * 1000,
      relayTo: plan.net.relay && plan.service ? plan.service : null,
      policyEndpoint: spec.policyEndpoint,
    });
    try {
      if (compose) await compose.up(main);
      else {
        await main.create();
        await main.start();
      }
      const sandbox: ContainerSandbox = new ContainerSandbox({
        ...sandboxInitOf(plan, main),
        remove: compose ? () => compose.down(main.id) : undefined,
        onStop: () => this.live.delete(sandbox),
      });
      this.live.add(sandbox);
      return sandbox;
    } catch (err) {
      await main.release();
      if (compose) await compose.down(main.id).catch(() => undefined);
      else if (main.id) await removeContainer(plan.engine, main.id).catch(() => undefined);
      throw err instanceof CategorizedError
        ? err
        : new CategorizedError(
            "sandbox_setup",
            `task ${spec.task.name}: starting its container failed: ${messageOf(err)}`,
            {
              cause: err,
            },
          );
    }
  }

  /** Everything decided before a container exists: the images built, the network, environment, limits and names. */
  private async plan(spec: ContainerSandboxSpec): Promise<ContainerPlan> {
    const engine = await this.engine();
    const { task } = spec;
    const logDir = spec.jobDir ? path.join(spec.jobDir, "builds") : this.options.buildLogDir;
    const { project, taskImage, sidecarImages } = await this.buildImages(engine, task, logDir);
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
    const service = spec.hostService ?? this.options.hostService;
    const net = planNetwork(engine, spec.network, service);
    if (project && service && !net.relay) {
      throw new CategorizedError(
        "sandbox_setup",
        `task ${task.name} has ${path.basename(project.file)}: its containers share one network, and the model gateway is reached from it only through the relay, which cannot run here (${relayPrecheck(engine) ?? "no relay"})`,
      );
    }
    const requested = this.options.agentUser ?? task.config.agent.user ?? "agent";
    const limits = await planLimits(engine, task, agentImage.image, { pidsLimit: this.options.pidsLimit });
    const name = containerName(spec.rolloutName);
    const labels = {
      ...ownerLabels(this.options.runId),
      [LABEL.job]: spec.jobName,
      [LABEL.rollout]: spec.rolloutName,
      [LABEL.task]: task.name,
    };
    return {
      engine,
      spec,
      project,
      sidecarImages,
      agentImage,
      service,
      net,
      workdir: workspaceOf(task),
      agentUser: requested === "root" ? null : requested,
      env: sandboxEnvOf(spec, project, service, net),
      limits,
      name,
      labels,
    };
  }

  /** The task's image and its sidecars' images, built side by side. */
  private async buildImages(
    engine: Engine,
    task: Task,
    logDir: string | undefined,
  ): Promise<{ project: ComposeProject | null; taskImage: string; sidecarImages: Map<string, string> }> {
    const logFile = logDir ? path.join(logDir, `${task.name}.log`) : undefined;
    const onProgress = this.options.onBuildProgress;
    const project = await composeProjectOf(task);
    const [{ image: taskImage }, sidecarImages] = await Promise.all([
      buildTaskImage(task, {
        engine,
        logFile,
        onProgress: onProgress ? (line) => onProgress(task.name, line) : undefined,
      }),
      project ? sidecarImagesOf(engine, task, project, logDir) : new Map<string, string>(),
    ]);
    return { project, taskImage, sidecarImages };
  }
}

/** What create() decided before making anything. */
interface ContainerPlan {
  engine: Engine;
  spec: ContainerSandboxSpec;
  project: ComposeProject | null;
  /** The image of each sidecar, by service name. */
  sidecarImages: Map<string, string>;
  /** main's image (the task's, or one derived from it with the agent installed) and its mounts. */
  agentImage: AgentImageResult;
  service: HostService | undefined;
  net: NetworkPlan;
  workdir: string;
  /** The agent's user name, or null when the agent runs as root. */
  agentUser: string | null;
  env: Record<string, string>;
  limits: LimitPlan;
  name: string;
  labels: Record<string, string>;
}

/** main's environment: the compose file's, under the task's and ours (as Harbor's overlays do), and the gateway's address. */
function sandboxEnvOf(
  spec: ContainerSandboxSpec,
  project: ComposeProject | null,
  service: HostService | undefined,
  net: NetworkPlan,
): Record<string, string> {
  const env: Record<string, string> = {
    ...project?.main.environment,
    ...spec.task.config.sandbox.env,
    ...spec.env,
  };
  if (service && net.directUrl) env.BENCHFLOW_GATEWAY_URL = net.directUrl;
  if (service && net.relay) env.BENCHFLOW_GATEWAY_URL = `http://127.0.0.1:${service.port}`;
  return env;
}

/** A compose task's run of its sidecars and network, or null for a task without a compose file. */
function composeRunOf(plan: ContainerPlan): ComposeRun | null {
  if (!plan.project) return null;
  const { hostConfig } = plan.limits;
  return new ComposeRun({
    engine: plan.engine,
    taskName: plan.spec.task.name,
    project: plan.project,
    images: plan.sidecarImages,
    namePrefix: plan.name,
    labels: plan.labels,
    internal: !plan.spec.network,
    // The same process and memory budget for each sidecar as for main (the disk is main's only).
    resources: {
      PidsLimit: hostConfig.PidsLimit,
      Memory: hostConfig.Memory,
      MemorySwap: hostConfig.MemorySwap,
    },
  });
}

function createRequestOf(plan: ContainerPlan, compose: ComposeRun | null): CreateRequest {
  return {
    name: plan.name,
    image: plan.agentImage.image,
    workdir: plan.workdir,
    command: setupCommand(plan.agentUser, plan.workdir),
    env: plan.env,
    networkMode: compose ? compose.network : plan.net.mode,
    aliases: compose ? [MAIN_SERVICE] : [],
    binds: plan.agentImage.mounts.map((m) => `${m.hostPath}:${m.sandboxPath}:ro`),
    limits: plan.limits.hostConfig,
    labels: plan.labels,
  };
}

/** The sandbox over the started container, with every warning the plan and the start gathered. */
function sandboxInitOf(plan: ContainerPlan, main: MainContainerRun): Omit<ContainerSandboxInit, "onStop"> {
  const { task } = plan.spec;
  const enforcement = plan.net.enforcement;
  const { hostBlock } = main;
  return {
    engine: plan.engine,
    id: main.id as string,
    name: plan.name,
    image: plan.agentImage.image,
    workdir: plan.workdir,
    agentUser: plan.agentUser,
    agentHome: main.agentHome,
    gatewayUrl: plan.env.BENCHFLOW_GATEWAY_URL ?? null,
    networkEnforcement: enforcement,
    hostBlock,
    warnings: [
      ...(hostBlock ? [hostBlockWarning(hostBlock)].filter((w) => w !== null) : []),
      ...(enforcement.startsWith("not_enforced") ? [`network: ${enforcement}`] : []),
      ...plan.agentImage.warnings,
      ...(plan.project?.warnings ?? []),
      ...plan.limits.warnings,
    ],
    hostWarnings: plan.limits.warnings,
    relay: main.relay,
    guardLease: main.guardLease,
    limits: plan.limits.limits,
    storageLimit:
      task.config.sandbox.storageMb > 0
        ? {
            bytes: task.config.sandbox.storageMb * 1024 * 1024,
            watched: plan.limits.watchBytes !== null,
          }
        : null,
  };
}

/** The task's compose file read and checked, or null when it has none; a bad file is task_error. */
async function composeProjectOf(task: Task): Promise<ComposeProject | null> {
  const file = await composeFileOf(task.environmentDir);
  if (!file) return null;
  try {
    return await loadCompose(file, { ...inheritedEnv(), ...task.config.sandbox.env });
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

function containerName(rolloutName: string): string {
  const base = rolloutName
    .replace(/[^a-zA-Z0-9_.-]+/g, "-")
    .replace(/^[^a-zA-Z0-9]+/, "")
    .slice(0, 60);
  return `bf-${base || "trial"}-${randomBytes(3).toString("hex")}`;
}
