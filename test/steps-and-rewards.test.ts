// Multi-key rewards and multi-step tasks, run as a user runs them: `bench run` with the oracle and
// nop on the namespace sandbox and in containers (Podman by default; Docker with
// DOCKER_HOST=unix:///run/docker.sock).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, FIXTURES, rollouts, useScratch } from "./testing/bench.js";
import { namespaceRan } from "./testing/engine-pass.js";

const scratch = useScratch("steps-and-rewards");

async function runOne(task: string, agent: string, sandbox: string) {
  const jobs = path.join(scratch(), `${task}-${agent}-${sandbox}`);
  const run = await bench([
    "run",
    path.join(FIXTURES, task),
    "-a",
    agent,
    "--jobs-dir",
    jobs,
    "--sandbox",
    sandbox,
  ]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const [r] = await rollouts(jobs);
  assert.ok(r?.result, `${task} ${agent}: no result.json`);
  return { dir: r.dir, result: r.result };
}

async function checkMultiReward(sandbox: string) {
  const oracle = await runOne("multi-reward", "oracle", sandbox);
  assert.deepEqual(oracle.result.rewards, { reward: 1, correctness: 1, style: 1 });
  assert.equal(oracle.result.reward_rule, "mean_of_keys");
  const nop = await runOne("multi-reward", "nop", sandbox);
  assert.deepEqual(nop.result.rewards, { reward: 0, correctness: 0, style: 0 });
  assert.equal(nop.result.reward_rule, "mean_of_keys");
}

async function checkThreeSteps(sandbox: string) {
  const oracle = await runOne("three-steps", "oracle", sandbox);
  const r = oracle.result;
  assert.deepEqual(r.rewards, { reward: 1, one: 1, two: 1, three: 1 });
  assert.equal(r.reward_rule, "multi_step_mean");
  assert.deepEqual(
    r.step_results.map((s: Record<string, unknown>) => [s.step_name, s.rewards, s.stopped_after, s.error]),
    [
      ["one", { reward: 1 }, null, null],
      ["two", { reward: 1 }, null, null],
      ["three", { reward: 1 }, null, null],
    ],
  );
  assert.equal(r.n_prompts, 3);
  // Each step's files are archived under steps/<name>/; step three fell back on the shared test.sh.
  for (const step of ["one", "two", "three"]) {
    assert.equal(
      (await fs.readFile(path.join(oracle.dir, "steps", step, "verifier/reward.txt"), "utf8")).trim(),
      "1",
    );
    await fs.access(path.join(oracle.dir, "steps", step, "agent/oracle.txt"));
  }
  const prompts = JSON.parse(await fs.readFile(path.join(oracle.dir, "prompts.json"), "utf8"));
  assert.equal(prompts.length, 3);
  assert.match(prompts[1], /seed\.txt/);

  // nop fails step one, whose min_reward stops the rollout: the later steps never run.
  const nop = await runOne("three-steps", "nop", sandbox);
  assert.deepEqual(nop.result.rewards, { reward: 0, one: 0 });
  assert.equal(nop.result.step_results.length, 1);
  assert.match(nop.result.step_results[0].stopped_after, /min_reward: reward = 0 is below 1/);
  await assert.rejects(fs.access(path.join(nop.dir, "steps", "two")));
}

describe("multi-key rewards and multi-step tasks: namespace sandbox", namespaceRan("namespace"), () => {
  it("multi-reward: every key kept, the scalar is their mean (oracle 1.0, nop 0.0)", () =>
    checkMultiReward("namespace"));
  it("three-steps: oracle runs all three steps (1.0); nop stops after step one (0.0)", () =>
    checkThreeSteps("namespace"));
});

describe(`multi-key rewards and multi-step tasks: container (${process.env.DOCKER_HOST ?? "default engine"})`, () => {
  const withEngine = (check: (sandbox: string) => Promise<void>) => async (t: TestContext) => {
    if (!(await engineOrSkip(t))) return;
    await check("container");
  };
  it("multi-reward: oracle 1.0, nop 0.0", withEngine(checkMultiReward));
  it("three-steps: oracle 1.0 over three steps, nop 0.0 after one", withEngine(checkThreeSteps));
});

describe("multi-step failures stay unscored (namespace sandbox)", namespaceRan("namespace"), () => {
  async function variant(name: string, edit: (dir: string) => Promise<void>) {
    const dir = path.join(scratch(), "tasks", name);
    await fs.cp(path.join(FIXTURES, "three-steps"), dir, { recursive: true });
    await edit(dir);
    const jobs = path.join(scratch(), `jobs-${name}`);
    const run = await bench(["run", dir, "-a", "oracle", "--jobs-dir", jobs, "--sandbox", "namespace"]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const [r] = await rollouts(jobs);
    return r?.result ?? {};
  }

  it("a step whose workdir/setup.sh fails ends the rollout as task_error, skipping its agent and verifier", async () => {
    const r = await variant("setup-fails", (dir) =>
      fs.writeFile(path.join(dir, "steps/two/workdir/setup.sh"), "echo no seed >&2\nexit 3\n"),
    );
    assert.equal(r.rewards, null);
    assert.equal(r.error_category, "task_error");
    assert.match(r.error, /step two: steps\/two\/workdir\/setup\.sh exited with 3: no seed/);
    assert.deepEqual(
      r.step_results.map((s: Record<string, unknown>) => [s.step_name, s.error_category, s.rewards]),
      [
        ["one", null, { reward: 1 }],
        ["two", "task_error", null],
      ],
    );
  });

  it("a step whose verifier fails makes the rollout a verifier_failure, not a mean of the other steps", async () => {
    const r = await variant("verifier-fails", (dir) =>
      fs.writeFile(
        path.join(dir, "steps/two/tests/test.sh"),
        'echo \'{"reward": 1, "ok": true}\' > /logs/verifier/reward.json\n',
      ),
    );
    assert.equal(r.rewards, null);
    assert.equal(r.verifier_error_category, "verifier_failure");
    assert.match(r.verifier_error, /step two: reward\.json key "ok" must be a finite number/);
    assert.equal(r.step_results.length, 2);
  });
});
