// No container of ours outlives its run: every container (and a compose rollout's network) is
// labelled with its job, rollout, run and owning process; stop() removes it, an interrupt removes the
// run's containers and networks, and the next run removes the orphans of a crashed one (owner
// process gone from this host).
import { randomBytes } from "node:crypto";
import { promises as fs, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { RELAY_DIR } from "../../relay.js";
import { EngineError } from "../engine/client.js";
import { connectEngine, type Engine } from "../engine/engine.js";

export const LABEL = {
  job: "benchflow.job",
  /** The rollout's name, under the label's published name. */
  rollout: "benchflow.trial",
  task: "benchflow.task",
  run: "benchflow.run",
  owner: "benchflow.owner",
  ownerStart: "benchflow.owner_start",
} as const;

/** A process's start time (clock ticks since boot), so a reused pid is not mistaken for its owner. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

const RUN_ID = `${os.hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;

/** This process's run id (the `benchflow.run` label of every container it makes). */
export function currentRunId(): string {
  return RUN_ID;
}

export function ownerLabels(runId = RUN_ID): Record<string, string> {
  return {
    [LABEL.run]: runId,
    [LABEL.owner]: `${process.pid}@${os.hostname()}`,
    [LABEL.ownerStart]: processStartTime(process.pid) ?? "",
  };
}

interface ContainerSummary {
  Id: string;
  Labels?: Record<string, string> | null;
}

export async function listContainers(engine: Engine, label: string): Promise<ContainerSummary[]> {
  const filters = JSON.stringify({ label: [label] });
  return engine.client.json<ContainerSummary[]>("GET", "/containers/json", { query: { all: true, filters } });
}

export async function removeContainer(engine: Engine, id: string): Promise<void> {
  try {
    await engine.client.send("DELETE", `/containers/${id}`, { query: { force: true, v: true } });
  } catch (err) {
    if (err instanceof EngineError && (err.status === 404 || err.status === 409)) return;
    throw err;
  }
}

interface NetworkSummary {
  Id: string;
  Name: string;
  Labels?: Record<string, string> | null;
}

export async function listNetworks(engine: Engine, label: string): Promise<NetworkSummary[]> {
  const filters = JSON.stringify({ label: [label] });
  return engine.client.json<NetworkSummary[]>("GET", "/networks", { query: { filters } });
}

export async function removeNetwork(engine: Engine, id: string): Promise<void> {
  try {
    await engine.client.send("DELETE", `/networks/${id}`);
  } catch (err) {
    if (err instanceof EngineError && err.status === 404) return;
    throw err;
  }
}

/** Removes every container (then network) this run (or the run named) made; returns their ids. */
export async function removeContainersOfRun(runId = RUN_ID, engine?: Engine): Promise<string[]> {
  const e = engine ?? (await connectEngine());
  const found = await listContainers(e, `${LABEL.run}=${runId}`);
  await Promise.all(found.map((c) => removeContainer(e, c.Id)));
  const networks = await listNetworks(e, `${LABEL.run}=${runId}`);
  await Promise.all(networks.map((n) => removeNetwork(e, n.Id).catch(() => undefined)));
  return found.map((c) => c.Id);
}

function ownerIsGone(labels: Record<string, string>): boolean {
  const [pidText, host] = (labels[LABEL.owner] ?? "").split("@");
  const pid = Number(pidText);
  if (host !== os.hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  const started = processStartTime(pid);
  if (started === null) return true;
  const recorded = labels[LABEL.ownerStart];
  return Boolean(recorded) && recorded !== started;
}

/**
 * Removes containers, then networks, whose owning process on this host is gone; returns the ids
 * of the containers and networks removed.
 */
export async function reapOrphans(engine?: Engine): Promise<string[]> {
  const e = engine ?? (await connectEngine());
  const found = await listContainers(e, LABEL.owner);
  const orphans = found.filter((c) => ownerIsGone(c.Labels ?? {}));
  await Promise.all(orphans.map((c) => removeContainer(e, c.Id)));
  const networks = (await listNetworks(e, LABEL.owner)).filter((n) => ownerIsGone(n.Labels ?? {}));
  // A network still in use (a container of a live run joined it) refuses removal: left for later.
  await Promise.all(networks.map((n) => removeNetwork(e, n.Id).catch(() => undefined)));
  await removeStaleRelaySockets();
  return [...orphans.map((c) => c.Id), ...networks.map((n) => n.Id)];
}

/** Gateway relay sockets (relay-<pid>-<id>.sock) whose process is gone. */
async function removeStaleRelaySockets(): Promise<void> {
  const names = await fs.readdir(RELAY_DIR).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(/^relay-(\d+)-/.exec(name)?.[1]);
    if (pid > 0 && processStartTime(pid) === null) await fs.rm(path.join(RELAY_DIR, name), { force: true });
  }
}

/**
 * On SIGINT/SIGTERM, remove this run's containers, then exit 130/143. Returns a function that
 * uninstalls the handlers (for a caller with its own shutdown path, which should then call
 * removeContainersOfRun itself).
 */
export function installInterruptCleanup(runId = RUN_ID): () => void {
  const handler = (signal: NodeJS.Signals) => {
    const code = signal === "SIGINT" ? 130 : 143;
    const done = () => process.exit(code);
    removeContainersOfRun(runId).then(done, done);
    setTimeout(done, 10_000).unref();
  };
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}
