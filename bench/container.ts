// The container sandbox's cost per rollout against the same work done with the engine directly:
// create, start, the same copies in and out, two execs, remove (medians over 10 runs of each, the image
// built beforehand). Target: at most 1.3x the direct engine calls.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import { readAll } from "../src/sandbox/container/engine/client.js";
import { connectEngine, type Engine } from "../src/sandbox/container/engine/engine.js";
import { entriesOf, tarStream } from "../src/sandbox/container/engine/tar-write.js";
import { buildTaskImage } from "../src/sandbox/container/image/image.js";
import { loadTask } from "../src/task/load.js";
import type { Task } from "../src/task/types.js";
import { type BenchRow, median } from "./report.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TASK = path.join(REPO, "examples/tasks/hello");
const RUNS = 10;
const EXECS = [
  "bash /solution/solve.sh",
  "mkdir -p /logs/verifier; bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1",
];

async function ours(backend: ContainerBackend, task: Task, out: string): Promise<void> {
  const sandbox = await backend.create({ task, jobName: "bench", rolloutName: "bench__1", network: false });
  await sandbox.upload(task.solutionDir as string, "/solution");
  await sandbox.upload(task.verifierDir, "/tests");
  await sandbox.exec(EXECS[0] as string, { user: "agent" });
  await sandbox.exec(EXECS[1] as string, { user: "root" });
  await sandbox.download("/logs/verifier", path.join(out, "verifier"));
  await sandbox.stop();
}

async function execDirect(engine: Engine, id: string, command: string): Promise<void> {
  const body = { Cmd: ["bash", "-c", command], AttachStdout: true, AttachStderr: true };
  const { Id } = await engine.client.json<{ Id: string }>("POST", `/containers/${id}/exec`, { json: body });
  await readAll(
    await engine.client.call("POST", `/exec/${Id}/start`, { json: { Detach: false, Tty: false } }),
  );
  await engine.client.json("GET", `/exec/${Id}/json`);
}

/** The same work with nothing of ours but the HTTP client and tar writer. */
async function direct(engine: Engine, image: string, task: Task, out: string): Promise<void> {
  const body = {
    Image: image,
    Entrypoint: ["sleep"],
    Cmd: ["infinity"],
    HostConfig: { NetworkMode: "none" },
  };
  const { Id } = await engine.client.json<{ Id: string }>("POST", "/containers/create", { json: body });
  await engine.client.send("POST", `/containers/${Id}/start`);
  for (const [dir, at] of [
    [task.solutionDir as string, "/solution"],
    [task.verifierDir, "/tests"],
  ] as const) {
    const tar = tarStream(await entriesOf(dir, at));
    await engine.client.send("PUT", `/containers/${Id}/archive`, {
      query: { path: "/" },
      body: tar,
      contentType: "application/x-tar",
    });
  }
  for (const command of EXECS) await execDirect(engine, Id, command);
  const tar = await readAll(
    await engine.client.call("GET", `/containers/${Id}/archive`, { query: { path: "/logs/verifier" } }),
  );
  await fs.writeFile(path.join(out, "verifier.tar"), tar);
  await engine.client.send("DELETE", `/containers/${Id}`, { query: { force: true } });
}

async function timed(work: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

export async function benchContainer(): Promise<BenchRow[]> {
  const engine = await connectEngine();
  const task = await loadTask(TASK);
  const { image } = await buildTaskImage(task, { engine });
  const backend = new ContainerBackend();
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-container-"));
  const oursMs: number[] = [];
  const directMs: number[] = [];
  try {
    // One warm-up of each, then alternate so drift on a noisy machine hits both alike.
    await ours(backend, task, path.join(scratch, "warm"));
    await direct(engine, image, task, scratch);
    for (let i = 0; i < RUNS; i++) {
      oursMs.push(await timed(() => ours(backend, task, path.join(scratch, `t${i}`))));
      directMs.push(await timed(() => direct(engine, image, task, scratch)));
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  const value = median(oursMs);
  const baseline = median(directMs);
  return [
    {
      name: `container trial overhead (${engine.name} ${engine.version})`,
      value,
      unit: "ms",
      baseline,
      baselineName: "engine API directly",
      target: "<= 1.3x",
      ok: value <= 1.3 * baseline,
    },
  ];
}
