// What used to do nothing with exit 0 and no word: each says what it did not do and why (or
// refuses), and what stopped at the first broken task reports every one.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { bench, EXAMPLES, rollouts, startBench, useScratch } from "./testing/bench.js";

const HELLO = path.join(EXAMPLES, "hello");
const NS = ["--sandbox", "namespace"];

describe("no silent no-ops", () => {
  const scratch = useScratch("cli-noops");

  it("converting a folder with no rollout refuses and writes nothing", async () => {
    const empty = path.join(scratch(), "empty-jobs");
    await fs.mkdir(empty);
    const out = path.join(scratch(), "rows.jsonl");
    const run = await bench(["train", "convert", empty, "-o", out]);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(
      run.stderr,
      /empty-jobs holds no rollout .*; nothing was written\. Give the folder bench run wrote/,
    );
    await assert.rejects(fs.access(out), "no empty rows file left behind");
  });

  it("--include that matches nothing is refused, naming the pattern and the tasks there", async () => {
    const run = await bench(["run", EXAMPLES, "-a", "oracle", "--include", "helo", "--dry-run", ...NS]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /--include helo matches none of the \d+ task\(s\) in .*\(count-words, .*hello.*\); fix the name or glob/,
    );
  });

  it("-a oracle -m vllm/x warns that the model is not used, and records none", async () => {
    const jobs = path.join(scratch(), "oracle-model");
    const run = await bench(["run", HELLO, "-a", "oracle", "-m", "vllm/x", "--jobs-dir", jobs, ...NS]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      /warning: agent oracle calls no model: model vllm\/x \(-m\) not used, nor recorded/,
    );
    // -q prints only errors and the final lines; the warning stays in the plan (--dry-run shows it).
    const quiet = await bench([
      "run",
      HELLO,
      "-a",
      "oracle",
      "-m",
      "vllm/x",
      "--jobs-dir",
      `${jobs}-q`,
      "-q",
      ...NS,
    ]);
    assert.doesNotMatch(quiet.stderr, /warning:/);
    const [found] = await rollouts(jobs);
    assert.equal(found?.result?.model ?? null, null);
    // A seed is sampling too: said, not silently dropped.
    const seeded = await bench(["run", HELLO, "-a", "oracle", "--seed", "7", "--dry-run", ...NS]);
    assert.match(
      JSON.parse(seeded.stdout).warnings.join("\n"),
      /agent oracle calls no model: sampling not used/,
    );
  });

  it("a stream of a path not there yet says it waits; with --no-follow it exits 2", async () => {
    const missing = path.join(scratch(), "not-yet");
    const child = startBench(["train", "stream", missing]);
    let stderr = "";
    const said = new Promise<void>((resolve) => {
      child.stderr?.on("data", (d) => {
        stderr += d;
        if (stderr.includes("waiting")) resolve();
      });
    });
    // A guard only: the line comes at once.
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    await said;
    clearTimeout(guard);
    child.kill("SIGTERM");
    assert.match(stderr, /not-yet does not exist yet: waiting for a run to make it/);
    const once = await bench(["train", "stream", missing, "--no-follow"]);
    assert.equal(once.code, 2, once.stderr);
    assert.match(once.stderr, /not-yet: no such folder/);
  });

  it("--dry-run shows the policy: endpoint, sampling, capture", async () => {
    const run = await bench([
      "run",
      HELLO,
      "-a",
      "bench-agent",
      "-m",
      "vllm/my-policy",
      "--base-url",
      "http://gpu:8000/v1",
      "--temperature",
      "0.7",
      "--max-tokens",
      "512",
      "--capture-tokens",
      "--dry-run",
      ...NS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const plan = JSON.parse(run.stdout);
    assert.equal(plan.policy.base_url, "http://gpu:8000/v1");
    assert.equal(plan.policy.provider_model, "my-policy");
    assert.deepEqual(plan.policy.sampling, { temperature: 0.7, top_p: null, max_tokens: 512, seed: null });
    assert.equal(plan.policy.capture_tokens.enabled, true);
    assert.equal(plan.policy.endpoint.first_byte_timeout_sec, 600);
    assert.ok(!run.stdout.includes("api_key"), "no key in the plan");
  });

  it("--dry-run shows where trials go: the SLURM settings from BENCHFLOW_SLURM_*, each flag over its variable", async () => {
    const env = {
      BENCHFLOW_EXECUTOR: "slurm",
      BENCHFLOW_SLURM_PARTITION: "gpu",
      BENCHFLOW_SLURM_ACCOUNT: "rl-team",
      BENCHFLOW_SLURM_SBATCH_ARGS: "--qos=low  --exclude=n9",
      BENCHFLOW_SLURM_GATEWAY_HOST: "10.1.2.3",
    };
    const fromEnv = await bench(["run", HELLO, "-a", "oracle", "--dry-run", ...NS], { env });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.deepEqual(JSON.parse(fromEnv.stdout).executor, {
      kind: "slurm",
      partition: "gpu",
      account: "rl-team",
      sbatch_args: ["--qos=low", "--exclude=n9"],
      gateway_host: "10.1.2.3",
    });
    const flags = await bench(
      [
        "run",
        HELLO,
        "-a",
        "oracle",
        "--slurm-partition",
        "cpu",
        "--slurm-account",
        "other",
        "--slurm-sbatch-arg=--nice=10",
        "--gateway-host",
        "10.9.9.9",
        "--dry-run",
        ...NS,
      ],
      { env },
    );
    assert.equal(flags.code, 0, flags.stderr);
    assert.deepEqual(JSON.parse(flags.stdout).executor, {
      kind: "slurm",
      partition: "cpu",
      account: "other",
      sbatch_args: ["--nice=10"],
      gateway_host: "10.9.9.9",
    });
    const local = await bench(["run", HELLO, "-a", "oracle", "--executor", "local", "--dry-run", ...NS], {
      env,
    });
    assert.deepEqual(JSON.parse(local.stdout).executor, { kind: "local" });
  });

  it("--sandbox auto says which sandbox it picked and why", async () => {
    const run = await bench(["run", HELLO, "-a", "oracle", "--dry-run"]);
    assert.equal(run.code, 0, run.stderr);
    const plan = JSON.parse(run.stdout);
    if (plan.sandbox === "container") assert.match(plan.sandbox_reason, /^(docker|podman) answered at \S+$/);
    else
      assert.match(
        plan.sandbox_reason,
        /^no container engine answered at unix:\/\/\/var\/run\/docker\.sock, unix:\/\/\/run\/podman\/podman\.sock$/,
      );
  });
});

describe("every broken task, not the first", () => {
  const scratch = useScratch("cli-broken");

  async function brokenTasks(root: string): Promise<void> {
    for (const name of ["one", "two"]) {
      await fs.cp(HELLO, path.join(root, name), { recursive: true });
      await fs.appendFile(path.join(root, name, "task.toml"), "\n[verifier]\ntimeout_sec = 3\n");
    }
  }

  it("bench build reports each broken task and goes on", async () => {
    const root = path.join(scratch(), "build");
    await brokenTasks(root);
    const run = await bench(["build", root]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^one: .*malformed TOML/m);
    assert.match(run.stdout, /^two: .*malformed TOML/m);
    assert.match(run.stderr, /2 of 2 task\(s\) did not build/);
  });

  it("bench tasks check takes several paths, a missing one among the problems", async () => {
    const root = path.join(scratch(), "check");
    await brokenTasks(root);
    const run = await bench(["tasks", "check", root, HELLO, path.join(scratch(), "nope")]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^one: problem: /m);
    assert.match(run.stdout, /^two: problem: /m);
    assert.match(run.stdout, /^hello: ok/m);
    assert.match(run.stdout, /nope: problem: tasks path .*nope does not exist/);
    assert.match(run.stderr, /3 of 4 task\(s\) have problems/);
  });
});
