// A two-service compose rollout's start-up against the same containers started by hand on the engine:
// ours is backend.create (network, sidecar built beforehand and healthy, main set up and ready)
// then stop(); the baseline makes the network, creates both containers, starts the sidecar, runs
// the same health probe until it passes, starts main (depends_on: service_healthy), then removes
// all. Medians over several runs of each, alternated; target at most 1.3x the direct calls.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import { serviceImage } from "../src/sandbox/container/compose/images.js";
import { loadCompose } from "../src/sandbox/container/compose/model.js";
import { readAll } from "../src/sandbox/container/engine/client.js";
import { connectEngine, type Engine } from "../src/sandbox/container/engine/engine.js";
import { buildTaskImage } from "../src/sandbox/container/image/image.js";
import { composeFileOf } from "../src/task/intent.js";
import { loadTask } from "../src/task/load.js";
import { type BenchRow, median } from "./report.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURE = path.join(REPO, "test/fixtures/tasks/compose-sidecar");
const RUNS = 7;
/** The probe's cadence, shorter than the fixture's 1s so the machinery's own cost shows. */
const INTERVAL_MS = 100;

async function execProbe(engine: Engine, id: string, argv: string[]): Promise<number | null> {
  const { Id } = await engine.client.json<{ Id: string }>("POST", `/containers/${id}/exec`, {
    json: { Cmd: argv, AttachStdout: true, AttachStderr: true, Tty: true },
  });
  await readAll(
    await engine.client.call("POST", `/exec/${Id}/start`, { json: { Detach: false, Tty: true } }),
  );
  return (await engine.client.json<{ ExitCode: number | null }>("GET", `/exec/${Id}/json`)).ExitCode;
}

/** The same two containers by hand, with nothing of ours but the HTTP client. */
async function direct(engine: Engine, mainImage: string, apiImage: string, probe: string[], n: number) {
  const network = `bf-bench-direct-${process.pid}-${n}`;
  const net = await engine.client.json<{ Id: string }>("POST", "/networks/create", {
    json: { Name: network, Internal: true },
  });
  const create = (image: string, alias: string, cmd?: string[]) =>
    engine.client.json<{ Id: string }>("POST", "/containers/create", {
      json: {
        Image: image,
        Cmd: cmd,
        HostConfig: { NetworkMode: network },
        NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [alias] } } },
      },
    });
  const [api, main] = await Promise.all([
    create(apiImage, "api"),
    create(mainImage, "main", ["sleep", "infinity"]),
  ]);
  await engine.client.send("POST", `/containers/${api.Id}/start`);
  while ((await execProbe(engine, api.Id, probe)) !== 0) await new Promise((r) => setTimeout(r, INTERVAL_MS));
  await engine.client.send("POST", `/containers/${main.Id}/start`);
  await Promise.all(
    [api.Id, main.Id].map((id) =>
      engine.client.send("DELETE", `/containers/${id}`, { query: { force: true } }),
    ),
  );
  await engine.client.send("DELETE", `/networks/${net.Id}`);
}

async function timed(work: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

export async function benchCompose(): Promise<BenchRow[]> {
  const engine = await connectEngine();
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-compose-"));
  try {
    const dir = path.join(scratch, "compose-sidecar");
    await fs.cp(FIXTURE, dir, { recursive: true });
    const file = path.join(dir, "environment/docker-compose.yaml");
    const yaml = await fs.readFile(file, "utf8");
    await fs.writeFile(file, yaml.replace("interval: 1s", `interval: ${INTERVAL_MS}ms`));
    const task = await loadTask(dir);
    const project = await loadCompose((await composeFileOf(task.environmentDir)) as string, process.env);
    const api = project.sidecars[0];
    if (!api?.healthcheck || api.healthcheck === "disabled")
      throw new Error("the fixture's api has no healthcheck");
    const probe = api.healthcheck.argv;
    const [{ image: mainImage }, apiImage] = await Promise.all([
      buildTaskImage(task, { engine }),
      serviceImage(engine, task, api),
    ]);
    const backend = new ContainerBackend();
    const ours = async () => {
      const sandbox = await backend.create({
        task,
        jobName: "bench",
        rolloutName: "bench-compose__1",
        network: false,
      });
      await sandbox.stop();
    };
    const oursMs: number[] = [];
    const directMs: number[] = [];
    await ours();
    await direct(engine, mainImage, apiImage, probe, 0);
    for (let i = 1; i <= RUNS; i++) {
      oursMs.push(await timed(ours));
      directMs.push(await timed(() => direct(engine, mainImage, apiImage, probe, i)));
    }
    const value = median(oursMs);
    const baseline = median(directMs);
    return [
      {
        name: `compose trial start-up, 2 services (${engine.name} ${engine.version})`,
        value,
        unit: "ms",
        baseline,
        baselineName: "the same containers by hand",
        target: "<= 1.3x",
        ok: value <= 1.3 * baseline,
      },
    ];
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
