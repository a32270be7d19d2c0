// One compose rollout on the engine: its network (one per rollout, labelled like its containers), the
// sidecars, and main. Every container is created at once (creating needs no dependency), and each
// is started as soon as what it depends on is met (service_started, service_healthy,
// service_completed_successfully), so independent services come up side by side.
// The rollout is ready when main is set up and every service with a healthcheck is healthy (what
// `docker compose up --wait` waits for). down() removes everything it made, network last.
import { CategorizedError } from "../../../errors.js";
import { EngineError, readAll } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { removeContainer, removeNetwork } from "../lifecycle/cleanup.js";
import { awaitHealthy, UnhealthyError } from "./healthcheck.js";
import {
  type ComposeProject,
  type ComposeService,
  type Condition,
  type HealthCheck,
  MAIN_SERVICE,
} from "./model.js";

export interface ComposeRunInit {
  engine: Engine;
  taskName: string;
  project: ComposeProject;
  /** The image of each sidecar, by service name. */
  images: Map<string, string>;
  /** Container and network names start with this. */
  namePrefix: string;
  labels: Record<string, string>;
  /** No way out (a no-network task); the services still reach each other. */
  internal: boolean;
  /** HostConfig limits every sidecar gets (PidsLimit, Memory, MemorySwap). */
  resources?: Record<string, number | undefined>;
}

interface EngineHealth {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  Retries?: number;
  StartPeriod?: number;
}

/** main's container, which the sandbox makes: created early, started when its dependencies are met. */
export interface MainContainer {
  create(): Promise<void>;
  start(): Promise<void>;
}

export class ComposeRun {
  /** The network's name (what main's NetworkMode is). */
  readonly network: string;
  private networkId: string | null = null;
  private readonly containers = new Map<string, string>();
  private readonly started = new Map<string, Promise<void>>();
  private readonly healthy = new Map<string, Promise<void>>();
  private readonly completed = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private readonly created = new Map<string, Promise<void>>();
  private main: MainContainer | null = null;

  constructor(private readonly init: ComposeRunInit) {
    this.network = `${init.namePrefix}-net`;
  }

  /** Creates the network, then every container, starts them in dependency order, awaits their health. */
  async up(main: MainContainer): Promise<void> {
    this.main = main;
    const { engine } = this.init;
    const created = await engine.client.json<{ Id: string }>("POST", "/networks/create", {
      json: {
        Name: this.network,
        Driver: "bridge",
        CheckDuplicate: true,
        Internal: this.init.internal,
        Labels: this.init.labels,
      },
    });
    this.networkId = created.Id;
    const all = [this.init.project.main, ...this.init.project.sidecars];
    for (const s of all) {
      this.created.set(s.name, s.name === MAIN_SERVICE ? main.create() : this.createSidecar(s));
    }
    const waits = [
      ...this.created.values(),
      ...all.map((s) => this.start(s.name)),
      ...this.init.project.sidecars.map(async (s) => {
        if ((await this.healthcheckOf(s)) !== null) await this.awaitHealthy(s.name);
      }),
    ];
    const settled = await Promise.allSettled(
      waits.map((w) =>
        w.catch((err: unknown) => {
          this.abort.abort(err);
          throw err;
        }),
      ),
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw this.abort.signal.reason ?? failed.reason;
  }

  /** Removes main (its id, once made) and the sidecars side by side, then the network. */
  async down(mainId: string | null): Promise<void> {
    this.abort.abort(new Error("the sandbox is stopping"));
    const { engine } = this.init;
    const ids = [...(mainId ? [mainId] : []), ...this.containers.values()];
    await Promise.all(ids.map((id) => removeContainer(engine, id)));
    if (this.networkId) await removeNetwork(engine, this.networkId);
  }

  private service(name: string): ComposeService {
    const { project } = this.init;
    return name === MAIN_SERVICE
      ? project.main
      : (project.sidecars.find((s) => s.name === name) as ComposeService);
  }

  private start(name: string): Promise<void> {
    let p = this.started.get(name);
    if (!p) {
      p = (async () => {
        const service = this.service(name);
        await Promise.all(service.dependsOn.map((d) => this.condition(d.service, d.condition, name)));
        await this.created.get(name);
        this.abort.signal.throwIfAborted();
        if (name === MAIN_SERVICE) await (this.main as MainContainer).start();
        else await this.startSidecar(name);
      })();
      this.started.set(name, p);
    }
    return p;
  }

  private condition(name: string, condition: Condition, dependant: string): Promise<void> {
    if (condition === "service_healthy") return this.awaitHealthy(name, dependant);
    if (condition === "service_completed_successfully") return this.awaitCompleted(name);
    return this.start(name);
  }

  private awaitHealthy(name: string, dependant?: string): Promise<void> {
    let p = this.healthy.get(name);
    if (!p) {
      p = (async () => {
        const service = this.service(name);
        const check = await this.healthcheckOf(service);
        if (check === null) {
          throw new CategorizedError(
            "task_error",
            `task ${this.init.taskName}: ${dependant ?? "a service"} waits for ${name} to be healthy (depends_on condition: service_healthy), but ${name} has no healthcheck — fix: give services.${name} a healthcheck, or use condition: service_started`,
          );
        }
        await this.start(name);
        const id = this.containers.get(name) as string;
        try {
          await awaitHealthy(this.init.engine, name, id, check, this.abort.signal, service.user ?? undefined);
        } catch (err) {
          throw await this.unhealthy(name, id, err);
        }
      })();
      this.healthy.set(name, p);
    }
    return p;
  }

  private awaitCompleted(name: string): Promise<void> {
    let p = this.completed.get(name);
    if (!p) {
      p = (async () => {
        await this.start(name);
        const id = this.containers.get(name) as string;
        const res = await this.init.engine.client.json<{ StatusCode: number }>(
          "POST",
          `/containers/${id}/wait`,
          {
            signal: this.abort.signal,
          },
        );
        if (res.StatusCode !== 0) {
          throw new CategorizedError(
            "sandbox_setup",
            `task ${this.init.taskName}: compose service ${name} exited with code ${res.StatusCode}, and something depends on it completing successfully; its last output: ${await this.logsOf(id)}`,
          );
        }
      })();
      this.completed.set(name, p);
    }
    return p;
  }

  /** The compose healthcheck, else the image's HEALTHCHECK, else none. */
  private async healthcheckOf(service: ComposeService): Promise<HealthCheck | null> {
    if (service.name === MAIN_SERVICE || service.healthcheck === "disabled") return null;
    if (service.healthcheck) return service.healthcheck;
    const { engine } = this.init;
    const image = encodeURIComponent(this.init.images.get(service.name) as string);
    const info = await engine.client.json<{ Config?: { Healthcheck?: EngineHealth | null } }>(
      "GET",
      `/images/${image}/json`,
    );
    let health = info.Config?.Healthcheck ?? null;
    if (!health && engine.isPodman) {
      // Podman 4.3's compatible inspect leaves an image's HEALTHCHECK out; its own API has it.
      const own = await engine.client.json<{ Healthcheck?: EngineHealth | null }>(
        "GET",
        `/v4.0.0/libpod/images/${image}/json`,
      );
      health = own.Healthcheck ?? null;
    }
    return fromEngineHealth(health);
  }

  private async createSidecar(service: ComposeService): Promise<void> {
    const { engine } = this.init;
    const exposed = Object.fromEntries(service.expose.map((p) => [/\//.test(p) ? p : `${p}/tcp`, {}]));
    const { Id } = await engine.client.json<{ Id: string }>("POST", "/containers/create", {
      query: { name: `${this.init.namePrefix}-${service.name}` },
      json: {
        Image: this.init.images.get(service.name),
        Cmd: service.command ?? undefined,
        Entrypoint: service.entrypoint ?? undefined,
        Env: Object.entries(service.environment).map(([k, v]) => `${k}=${v}`),
        WorkingDir: service.workingDir ?? undefined,
        User: service.user ?? undefined,
        ExposedPorts: Object.keys(exposed).length > 0 ? exposed : undefined,
        Labels: { ...this.init.labels, "benchflow.service": service.name },
        // We run the healthcheck ourselves (healthcheck.ts); the engine's own would run it twice.
        Healthcheck: { Test: ["NONE"] },
        HostConfig: { ...this.init.resources, NetworkMode: this.network },
        NetworkingConfig: { EndpointsConfig: { [this.network]: { Aliases: [service.name] } } },
      },
    });
    this.containers.set(service.name, Id);
  }

  private async startSidecar(name: string): Promise<void> {
    try {
      await this.init.engine.client.send("POST", `/containers/${this.containers.get(name)}/start`);
    } catch (err) {
      throw new CategorizedError(
        "sandbox_setup",
        `task ${this.init.taskName}: compose service ${name} did not start: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /** The error for a service that failed its healthcheck, or stopped while it was checked. */
  private async unhealthy(name: string, id: string, err: unknown): Promise<unknown> {
    if (this.abort.signal.aborted && err === this.abort.signal.reason) return err;
    const prefix = `task ${this.init.taskName}: compose service ${name}`;
    if (err instanceof UnhealthyError) {
      return new CategorizedError("sandbox_setup", `${prefix} ${err.message.replace(/^service \S+ /, "")}`);
    }
    if (err instanceof EngineError) {
      const state = await this.init.engine.client
        .json<{ State?: { Running?: boolean; ExitCode?: number } }>("GET", `/containers/${id}/json`)
        .catch(() => null);
      if (state?.State?.Running === false) {
        return new CategorizedError(
          "sandbox_setup",
          `${prefix} stopped (exit code ${state.State.ExitCode}) before it became healthy; its last output: ${await this.logsOf(id)}`,
        );
      }
    }
    return err;
  }

  private async logsOf(id: string): Promise<string> {
    try {
      const res = await this.init.engine.client.call("GET", `/containers/${id}/logs`, {
        query: { stdout: true, stderr: true, tail: 20 },
      });
      return printable(unframe(await readAll(res))).slice(-1500) || "(none)";
    } catch {
      return "(unavailable)";
    }
  }
}

/** An image's HEALTHCHECK (nanosecond durations) in compose's terms. */
function fromEngineHealth(h: EngineHealth | null): HealthCheck | null {
  const [kind, ...rest] = h?.Test ?? [];
  if (!h || !kind || kind === "NONE") return null;
  const argv = kind === "CMD-SHELL" ? ["/bin/sh", "-c", rest.join(" ")] : rest;
  if (argv.length === 0) return null;
  const ms = (ns: number | undefined, fallback: number) => (ns ? ns / 1e6 : fallback);
  const interval = ms(h.Interval, 30_000);
  return {
    argv,
    intervalMs: interval,
    timeoutMs: ms(h.Timeout, 30_000),
    retries: h.Retries || 3,
    startPeriodMs: ms(h.StartPeriod, 0),
    startIntervalMs: interval,
  };
}

/** A non-tty log stream without its 8-byte frame headers. */
function unframe(buf: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= buf.length && buf[at + 1] === 0 && buf[at + 2] === 0 && buf[at + 3] === 0) {
    const size = buf.readUInt32BE(at + 4);
    parts.push(buf.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return (at === 0 ? buf : Buffer.concat(parts)).toString("utf8");
}

function printable(text: string): string {
  return [...text]
    .filter((c) => c >= " " || c === "\n" || c === "\t")
    .join("")
    .trim();
}
