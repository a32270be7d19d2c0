// The sandbox's own container ("main"), brought up in two steps: created, then started. A compose
// task's ComposeRun calls the two itself (main is created with the sidecars and started once what it
// depends on is met); a plain task calls them one after the other. What the steps brought up stays
// on the object, for the sandbox made from it, or for undoing it when a later step fails.
import type { Readable } from "node:stream";
import type { GuardLease } from "../../host-guard.js";
import { type HostService, type Relay, relayUnavailableReason, startRelay } from "../../relay.js";
import type { HostBlockRecord, PolicyEndpoint } from "../../types.js";
import type { Engine } from "../engine/engine.js";
import { closeHostFor } from "./host-block.js";
import {
  engineReason,
  isStorageOptError,
  type LimitHostConfig,
  type LimitPlan,
  watchStorage,
} from "./limits.js";
import { awaitSetup } from "./setup.js";

/** The engine's create request for main, as the backend planned it. */
export interface CreateRequest {
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
  /** PidsLimit, Memory and MemorySwap, NanoCpus, StorageOpt (limits.ts). */
  limits: LimitHostConfig;
  labels: Record<string, string>;
}

export interface MainContainerPlan {
  engine: Engine;
  request: CreateRequest;
  /** The limits the request carries: a disk size the engine refuses is watched instead. */
  limitPlan: LimitPlan;
  /** The task's disk size, for the message when the engine refuses it. */
  storageMb: number;
  /** How long the container's setup may take to report, ENTRYPOINT included. */
  setupTimeoutMs: number;
  /** The host server to relay to once main runs; null when no relay is wanted. */
  relayTo: HostService | null;
  policyEndpoint?: PolicyEndpoint;
}

export class MainContainerRun {
  /** The container's id, once created. */
  id: string | null = null;
  /** The agent user's home, as the setup reported it. */
  agentHome = "";
  relay: Relay | null = null;
  hostBlock: HostBlockRecord | null = null;
  guardLease: GuardLease | null = null;
  /** The container's output, attached before it starts. */
  private output: Readable | null = null;

  constructor(private readonly plan: MainContainerPlan) {}

  async create(): Promise<void> {
    const { engine, request, limitPlan, storageMb } = this.plan;
    try {
      this.id = await createContainer(engine, request);
    } catch (err) {
      // The engine takes a size, but not this one: a driver whose size covers the image too
      // (btrfs, zfs) refuses one smaller than the image. Other tasks may still get theirs.
      if (!limitPlan.hostConfig.StorageOpt || !isStorageOptError(err)) throw err;
      watchStorage(
        limitPlan,
        storageMb,
        `${engine.name} refused a disk of ${storageMb} MB for this task's image (${engineReason(err)})`,
      );
      this.id = await createContainer(engine, request);
    }
    // Attached before it starts, so none of the setup's report is missed.
    this.output = await engine.client.call("POST", `/containers/${this.id}/attach`, {
      query: { stream: true, stdout: true, stderr: true },
    });
  }

  async start(): Promise<void> {
    const { engine, request, relayTo } = this.plan;
    const id = this.id as string;
    await engine.client.send("POST", `/containers/${id}/start`);
    this.agentHome = await awaitSetup(this.output as Readable, {
      timeoutMs: this.plan.setupTimeoutMs,
      entrypointOf: () => imageEntrypoint(engine, request.image),
    });
    if (relayTo) this.relay = await startRelayFor(engine, id, relayTo);
    const closed = await closeHostFor(engine, id, request.networkMode, this.plan.policyEndpoint);
    this.hostBlock = closed.record;
    this.guardLease = closed.lease;
  }

  /** Lets go of the output and the relay after a failed start (the container is removed by its owner). */
  async release(): Promise<void> {
    this.output?.destroy();
    await this.relay?.close().catch(() => undefined);
    await this.guardLease?.release();
  }
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
      ...r.limits,
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

async function imageEntrypoint(engine: Engine, image: string): Promise<string[] | null> {
  const info = await engine.client.json<{ Config?: { Entrypoint?: string[] | null } }>(
    "GET",
    `/images/${encodeURIComponent(image)}/json`,
  );
  return info.Config?.Entrypoint ?? null;
}

async function startRelayFor(engine: Engine, id: string, service: HostService): Promise<Relay> {
  const info = await engine.client.json<{ State?: { Pid?: number } }>("GET", `/containers/${id}/json`);
  const pid = info.State?.Pid ?? 0;
  const why = relayUnavailableReason(pid, engine.isLocal);
  if (why) throw new Error(`cannot connect the sandbox to the gateway: ${why}`);
  return startRelay(pid, service);
}
