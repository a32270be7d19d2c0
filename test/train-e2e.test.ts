// bench train on jobs that bench run really wrote: bench-agent on the scripted policy (rows with
// tool calls and tokens), oracle jobs (withheld: no model calls), and stream following a live run.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { Evaluation } from "../src/job/evaluation.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, slowHelloTasks, startBench, useScratch, waitUntil } from "./testing/bench.js";

const scratch = useScratch("train-e2e");

const lines = async (file: string) =>
  (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("bench train on bench-agent rollouts", () => {
  let agentDir: string;
  before(async () => {
    const policy = await startScriptedEndpoint({
      script: await loadEndpointScript(path.join(REPO, "examples/policies/hello.json")),
    });
    try {
      const run = await new Evaluation({
        tasks: path.join(EXAMPLES, "hello"),
        agent: "bench-agent",
        model: "vllm/scripted",
        trials: 3,
        jobsDir: path.join(scratch(), "group"),
        sandbox: "namespace",
        env: {},
        policy: { baseUrl: policy.baseUrl, captureTokens: true },
      }).run();
      assert.equal(run.exitCode, 0);
    } finally {
      await policy.close();
    }
    agentDir = path.join(scratch(), "group/bench-agent");
  });

  it("converts one row per rollout with the group block, and validate counts every row's tool calls", async () => {
    const out = path.join(scratch(), "rows.jsonl");
    const convert = await bench([
      "train",
      "convert",
      agentDir,
      "--out",
      out,
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
      "--manifest",
      path.join(scratch(), "stats.json"),
    ]);
    assert.equal(convert.code, 0, convert.stderr);
    assert.match(
      convert.stdout,
      new RegExp(
        `Converted 3 row\\(s\\) from 3 rollout\\(s\\) -> ${out.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`,
      ),
    );
    assert.match(
      convert.stdout,
      /Groups \(grpo, by task,agent,model\): 1; 0 unscored rollout\(s\) left out of every baseline\.\n/,
    );
    const rows = await lines(out);
    assert.equal(rows.length, 3);
    for (const row of rows) {
      assert.equal(row.advantage, 0);
      assert.equal(row.group.id, "task=hello|agent=bench-agent|model=vllm/scripted");
      assert.equal(row.group.mean, 1);
      assert.equal(row.in_baseline, true);
      assert.ok(row.messages.some((m: { tool_calls?: unknown[] }) => (m.tool_calls?.length ?? 0) > 0));
    }
    const validate = await bench(["train", "validate", out, "--require-tool-calls"]);
    assert.equal(validate.code, 0, validate.stderr);
    assert.equal(validate.stdout, '{"ok": true, "rows": 3, "rows_with_tool_calls": 3}\n');
  });

  it("merges each rollout's calls into one token sequence, masks 1 only on sampled tokens", async () => {
    const out = path.join(scratch(), "tokens.jsonl");
    const convert = await bench(["train", "convert", agentDir, "--out", out, "--format", "tokens"]);
    assert.equal(convert.code, 0, convert.stderr);
    const rows = await lines(out);
    assert.equal(rows.length, 3);
    for (const row of rows) {
      assert.equal(row.completion_ids.length, row.completion_mask.length);
      assert.equal(row.completion_ids.length, row.completion_logprobs.length);
      const sampled = row.completion_mask.filter((m: number) => m === 1).length;
      assert.ok(sampled > 0 && sampled < row.completion_ids.length, "tool output between calls is masked 0");
    }
  });

  it("streams the three rollouts of the finished group with their advantages", async () => {
    const stream = await bench([
      "train",
      "stream",
      agentDir,
      "--no-follow",
      "--group-size",
      "3",
      "--group-by",
      "task,agent,model",
    ]);
    assert.equal(stream.code, 0, stream.stderr);
    const records = stream.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(records.length, 3);
    assert.deepEqual(
      records.map((r) => r.advantage),
      [0, 0, 0],
    );
    assert.ok(
      records.every((r) => r.schema_version === "benchflow.rollout-stream.v1" && r.group_complete === true),
    );
  });
});

describe("bench train on oracle jobs", () => {
  it("withholds the group: oracle rollouts never reached a model", async () => {
    const jobs = path.join(scratch(), "oracle");
    const run = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--trials",
      "2",
      "--jobs-dir",
      jobs,
      "--sandbox",
      "namespace",
    ]);
    assert.equal(run.code, 0, run.stderr);
    const manifest = path.join(scratch(), "oracle-manifest.json");
    const convert = await bench([
      "train",
      "convert",
      path.join(jobs, "oracle"),
      "--out",
      path.join(scratch(), "oracle.jsonl"),
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
      "--manifest",
      manifest,
    ]);
    assert.equal(convert.code, 0, convert.stderr);
    assert.match(convert.stdout, /Converted 0 row\(s\) from 2 rollout\(s\)/);
    const m = JSON.parse(await fs.readFile(manifest, "utf8"));
    const text = JSON.stringify(m);
    assert.match(text, /"withheld":"no_model_calls"|"withheld": "no_model_calls"/);
  });
});

describe("bench train stream on a running job", () => {
  // Bounded only against a hang, generously: bench run starts slowly on a loaded machine.
  const waitFor = (file: string) =>
    waitUntil(
      () =>
        fs.access(file).then(
          () => true,
          () => false,
        ),
      `${file} to appear`,
      120_000,
    );

  function collect(child: ReturnType<typeof startBench>): Promise<{ code: number | null; stdout: string }> {
    let stdout = "";
    child.stdout?.on("data", (d) => (stdout += d));
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout })));
  }

  it("emits every rollout once and exits 0 when the run finishes", async () => {
    const tasks = await slowHelloTasks(
      path.join(scratch(), "live-tasks"),
      ["slow-0", "slow-1", "slow-2"],
      0.4,
    );
    const jobs = path.join(scratch(), "live");
    const run = collect(
      startBench([
        "run",
        tasks,
        "-a",
        "oracle",
        "--trials",
        "2",
        "-j",
        "1",
        "--jobs-dir",
        jobs,
        "--job-name",
        "live",
        "--sandbox",
        "namespace",
      ]),
    );
    await waitFor(path.join(jobs, "oracle/trial-02/live/evaluation.json"));
    const stream = collect(startBench(["train", "stream", path.join(jobs, "oracle")]));
    const [r, s] = await Promise.all([run, stream]);
    assert.equal(r.code, 0);
    assert.equal(s.code, 0);
    const names = s.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).rollout);
    assert.equal(names.length, 6);
    assert.equal(new Set(names).size, 6, "each rollout once");
  });

  it("exits 1 when the run's process dies", async () => {
    // The first task ends soon, so the stream has a record to show; the others (run after it, in
    // name order) last far longer than the test: the run dies with the stream following it.
    const tasks = await slowHelloTasks(path.join(scratch(), "dying-tasks"), ["slow-0"], 0.4);
    await slowHelloTasks(tasks, ["slow-1", "slow-2", "slow-3"], 600);
    const jobs = path.join(scratch(), "dying");
    const runner = startBench([
      "run",
      tasks,
      "-a",
      "oracle",
      "-j",
      "1",
      "--jobs-dir",
      jobs,
      "--job-name",
      "d",
      "--sandbox",
      "namespace",
    ]);
    await waitFor(path.join(jobs, "oracle/trial-01/d/evaluation.json"));
    const following = startBench(["train", "stream", path.join(jobs, "oracle")]);
    let seen = "";
    following.stdout?.on("data", (d) => (seen += d));
    const stream = collect(following);
    // Killed once the stream has shown the first rollout: it follows the run, which holds its lock.
    await waitUntil(async () => seen.includes("\n"), "the stream's first record", 120_000);
    runner.kill("SIGKILL");
    const s = await stream;
    assert.equal(s.code, 1);
  });
});
