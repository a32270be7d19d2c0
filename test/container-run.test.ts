// bench run on the container sandbox (Docker Engine API; Podman here): real images, real containers.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { Evaluation } from "../src/job/evaluation.js";
import { listContainers } from "../src/sandbox/container/lifecycle/cleanup.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import {
  bench,
  EXAMPLES,
  REPO,
  rollouts,
  slowHelloTasks,
  startBench,
  useScratch,
  waitUntil,
} from "./testing/bench.js";

const CT = ["--sandbox", "container"];
const scratch = useScratch("container-run");

describe("bench run --sandbox container", () => {
  it("scores half-life's oracle 1.0 twice, building its image once, and nop 0.0", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    // A copy whose environment/ differs from every earlier run's, so its image is built here.
    const task = path.join(scratch(), "tasks/half-life");
    await fs.cp(path.join(EXAMPLES, "half-life"), task, { recursive: true });
    await fs.writeFile(path.join(task, "environment/nonce.txt"), randomBytes(8).toString("hex"));
    const jobs = path.join(scratch(), "half-life");
    const run = await bench([
      "run",
      task,
      "-a",
      "oracle",
      "--trials",
      "2",
      "-j",
      "2",
      "--jobs-dir",
      jobs,
      ...CT,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /trial-01  reward 1\.0: close_enough pass/);
    assert.match(run.stdout, /trial-02  reward 1\.0: close_enough pass/);
    const jobDirs = (await rollouts(jobs)).map((r) => path.dirname(r.dir));
    const logs = await Promise.all(
      jobDirs.map((d) => fs.readFile(path.join(d, "builds/half-life.log"), "utf8")),
    );
    const built = logs.filter((log) => !/exists \(environment\/ unchanged\); reused/.test(log));
    assert.equal(built.length, 1, "one build, in the first job; the second job reuses the image");
    const image = JSON.parse(
      await fs.readFile(
        path.join(
          jobDirs[0] ?? "",
          (await fs.readdir(jobDirs[0] ?? "")).find((d) => d.startsWith("half-life__")) ?? "",
          "config.json",
        ),
        "utf8",
      ),
    ).sandbox_image;
    const nop = await bench(["run", task, "-a", "nop", "--jobs-dir", path.join(scratch(), "nop"), ...CT]);
    assert.equal(nop.code, 0, nop.stderr);
    assert.match(nop.stdout, /trial-01  reward 0\.0/);
    await engine.client
      .send("DELETE", `/images/${encodeURIComponent(image)}`, { query: { force: true } })
      .catch(() => undefined);
  });

  it("runs a task whose Dockerfile installs a Debian package, with its oracle", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const run = await bench([
      "run",
      path.join(EXAMPLES, "jq-report"),
      "-a",
      "oracle",
      "--jobs-dir",
      path.join(scratch(), "jq"),
      ...CT,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /trial-01  reward 1\.0/);
  });

  it("runs bench-agent against the scripted policy: hello 1.0, half-life partial credit", async (t) => {
    if (!(await engineOrSkip(t))) return;
    for (const [task, script, reward] of [
      ["hello", "hello.json", 1],
      ["half-life", "half-life-one-wrong.json", 0.6667],
    ] as const) {
      const policy = await startScriptedEndpoint({
        script: await loadEndpointScript(path.join(REPO, "examples/policies", script)),
      });
      try {
        const result = await new Evaluation({
          tasks: path.join(EXAMPLES, task),
          agent: "bench-agent",
          model: "vllm/scripted",
          jobsDir: path.join(scratch(), `agent-${task}`),
          sandbox: "container",
          env: {},
          policy: { baseUrl: policy.baseUrl, captureTokens: true },
        }).run();
        assert.equal(result.results[0]?.rewards?.reward, reward, `${task}: ${result.results[0]?.error}`);
        assert.equal(result.results[0]?.sandbox, "container");
      } finally {
        await policy.close();
      }
    }
  });
});

describe("bench run --sandbox container: eight at once, and nothing left behind", () => {
  it("runs 8 trials concurrently at -j 8; after the run, and after a SIGKILL and a rerun, no container of ours is left", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const ours = async (job: string) =>
      (await listContainers(engine, "benchflow.job")).filter((c) => c.Labels?.["benchflow.job"] === job);
    const names = Array.from({ length: 8 }, (_, i) => `slow-${i}`);
    const tasks = await slowHelloTasks(path.join(scratch(), "eight"), names, 2);
    const jobs = path.join(scratch(), "eight-jobs");
    const run = await bench([
      "run",
      tasks,
      "-a",
      "oracle",
      "-j",
      "8",
      "--jobs-dir",
      jobs,
      "--job-name",
      "first",
      ...CT,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const results = (await rollouts(jobs)).map((r) => r.result);
    assert.equal(results.length, 8);
    const spans = results.map((r) => [Date.parse(r?.started_at), Date.parse(r?.finished_at)] as const);
    const latestStart = Math.max(...spans.map(([s]) => s));
    const earliestEnd = Math.min(...spans.map(([, e]) => e));
    assert.ok(latestStart < earliestEnd, "all eight trials were running at the same moment");
    assert.deepEqual(await ours("first"), []);

    const args = ["run", tasks, "-a", "oracle", "-j", "8", "--jobs-dir", jobs, "--job-name", "killed", ...CT];
    const child = startBench(args);
    // Bounded only against a hang, generously: a loaded engine is slow to make the first container.
    await waitUntil(async () => (await ours("killed")).length > 0, "a container of the run", 120_000);
    assert.ok((await ours("killed")).length > 0, "containers were running when the run was killed");
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const rerun = await bench(args);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(rerun.stdout.match(/  reward 1\.0/g)?.length, 8);
    assert.deepEqual(await ours("killed"), [], "the rerun removed the dead run's containers and its own");
  });
});

describe("bench run --sandbox container: a forced stop", () => {
  it("removes the run's containers when a second signal forces it to stop", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const ours = async () =>
      (await listContainers(engine, "benchflow.job")).filter((c) => c.Labels?.["benchflow.job"] === "forced");
    const tasks = await slowHelloTasks(path.join(scratch(), "forced"), ["slow-a", "slow-b"], 60, false);
    const child = startBench([
      "run",
      tasks,
      "-a",
      "oracle",
      "-j",
      "2",
      "--jobs-dir",
      path.join(scratch(), "forced-jobs"),
      "--job-name",
      "forced",
      ...CT,
    ]);
    await waitUntil(async () => (await ours()).length === 2, "two containers running");
    const exited = new Promise((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 100));
    child.kill("SIGTERM");
    assert.equal(await exited, 143);
    assert.deepEqual(await ours(), []);
  });
});
