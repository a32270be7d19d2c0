// `bench run` end to end: real namespace sandboxes, real verifiers, real files.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { bench, EXAMPLES, FIXTURES, rollouts, useScratch } from "./testing/bench.js";

const NS = ["--sandbox", "namespace"];

describe("bench run: a group of rollouts of half-life", () => {
  const scratch = useScratch("group");

  it("writes four trial jobs and prints four reward 1.0 lines with the test's last line", async () => {
    const jobs = path.join(scratch(), "jobs/group");
    const run = await bench([
      "run",
      path.join(EXAMPLES, "half-life"),
      "-a",
      "oracle",
      "--trials",
      "4",
      "-j",
      "2",
      "--jobs-dir",
      jobs,
      ...NS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    for (const n of [1, 2, 3, 4]) {
      assert.equal(
        lines[n - 1],
        `trial-0${n}  reward 1.0: close_enough pass, plausible_uncertainty pass, consistent pass`,
      );
    }
    assert.match(
      lines[4] ?? "",
      /^4 rollout\(s\): 4 passed, 0 failed, 0 errored, 0 verifier error\(s\); mean reward 1\.000/,
    );
    assert.deepEqual(await fs.readdir(path.join(jobs, "oracle")), [
      "trial-01",
      "trial-02",
      "trial-03",
      "trial-04",
    ]);
    const found = await rollouts(jobs);
    assert.equal(found.length, 4);
    for (const { dir, result } of found) {
      assert.equal(result?.rewards?.reward, 1);
      assert.equal(result?.task_name, "half-life");
      assert.match(result?.task_digest, /^sha256:[0-9a-f]{64}$/);
      for (const f of [
        "config.json",
        "timing.json",
        "prompts.json",
        "verifier/test-stdout.txt",
        "agent/oracle.txt",
        "trajectory/acp_trajectory.jsonl",
      ]) {
        await fs.access(path.join(dir, f));
      }
      const jobDir = path.dirname(dir);
      const summary = JSON.parse(await fs.readFile(path.join(jobDir, "summary.json"), "utf8"));
      assert.equal(summary.passed, 1);
      assert.equal(summary.total, 1);
      const plan = JSON.parse(await fs.readFile(path.join(jobDir, "evaluation.json"), "utf8"));
      assert.equal(plan.trials_total, 4);
      await assert.rejects(
        fs.access(path.join(jobDir, ".evaluation.lock")),
        "the lock is released at the end",
      );
    }
  });

  it("scores every nop rollout 0.0 and reports nothing as an error", async () => {
    const jobs = path.join(scratch(), "jobs/nop");
    const run = await bench([
      "run",
      path.join(EXAMPLES, "half-life"),
      "-a",
      "nop",
      "--trials",
      "2",
      "--jobs-dir",
      jobs,
      ...NS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /trial-01 {2}reward 0\.0: close_enough fail, plausible_uncertainty fail, consistent fail/,
    );
    assert.match(run.stdout, /trial-02 {2}reward 0\.0/);
    assert.match(run.stdout, /0 passed, 2 failed, 0 errored, 0 verifier error/);
    assert.doesNotMatch(run.stdout + run.stderr, /unscored|warning|error:/);
  });

  it("runs the native task.md layout", async () => {
    const run = await bench([
      "run",
      path.join(EXAMPLES, "count-words"),
      "-a",
      "oracle",
      "--jobs-dir",
      path.join(scratch(), "jobs/md"),
      ...NS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /trial-01 {2}reward 1\.0/);
  });
});

describe("bench run: verifier and agent failures", () => {
  const scratch = useScratch("failures");

  const runFixture = (names: string[], extra: string[] = []) =>
    bench([
      "run",
      FIXTURES,
      "-a",
      "oracle",
      "-j",
      "4",
      "--jobs-dir",
      path.join(scratch(), names.join("-")),
      ...names.flatMap((n) => ["--include", n]),
      ...NS,
      ...extra,
    ]);

  it("treats a missing reward file as an unscored verifier error and still finishes the job", async () => {
    const run = await runFixture(["no-reward"]);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      /trial-01 {2}unscored \(verifier_failure\): verifier exited with rc=0; no reward file found/,
    );
    const [r] = await rollouts(path.join(scratch(), "no-reward"));
    assert.equal(r?.result?.rewards, null);
    assert.equal(r?.result?.verifier_error_category, "verifier_failure");
    const summary = JSON.parse(
      await fs.readFile(path.join(path.dirname(r?.dir ?? ""), "summary.json"), "utf8"),
    );
    assert.equal(summary.verifier_errored, 1);
  });

  it("refuses rewards of abc, NaN and 7, scores a non-zero exit with a fresh reward, and honours a widened range", async () => {
    const names = [
      "reward-abc",
      "reward-nan",
      "reward-seven",
      "reward-disagree",
      "nonzero-with-reward",
      "reward-range",
      "reward-json-wins",
    ];
    const run = await runFixture(names);
    assert.equal(run.code, 1);
    const byTask = new Map(
      (await rollouts(path.join(scratch(), names.join("-")))).map((r) => [r.result?.task_name, r.result]),
    );
    for (const bad of ["reward-abc", "reward-nan", "reward-seven", "reward-disagree"]) {
      assert.equal(byTask.get(bad)?.rewards, null, bad);
      assert.equal(byTask.get(bad)?.verifier_error_category, "verifier_failure", bad);
    }
    assert.match(byTask.get("reward-abc")?.verifier_error, /must hold one number; got "abc"/);
    assert.match(byTask.get("reward-nan")?.verifier_error, /NaN/);
    assert.match(byTask.get("reward-seven")?.verifier_error, /outside the task's reward range \[0, 1\]/);
    assert.match(byTask.get("reward-disagree")?.verifier_error, /must agree/);
    assert.equal(byTask.get("nonzero-with-reward")?.rewards?.reward, 0.5);
    assert.equal(byTask.get("reward-range")?.rewards?.reward, -0.5);
    assert.equal(byTask.get("reward-json-wins")?.rewards?.reward, 0.25);
    assert.equal(byTask.get("reward-json-wins")?.reward_rule, "reward_key");
    assert.equal(byTask.get("reward-range")?.reward_rule, "reward_txt");
  });

  it("stops a hanging verifier at its timeout", async () => {
    const run = await runFixture(["verifier-hangs"]);
    assert.equal(run.code, 1);
    const [r] = await rollouts(path.join(scratch(), "verifier-hangs"));
    assert.equal(r?.result?.verifier_error_category, "verifier_timeout");
    assert.equal(r?.result?.rewards, null);
  });

  it("stops a hanging agent at its timeout, kills what it left running, and still scores the workspace", async () => {
    const run = await runFixture(["agent-hangs"]);
    assert.equal(run.code, 0, `a timeout is the policy's failure, not an error of the run: ${run.stdout}`);
    const [r] = await rollouts(path.join(scratch(), "agent-hangs"));
    assert.equal(r?.result?.error_category, "timeout");
    assert.equal(r?.result?.rewards?.reward, 1);
    assert.match(run.stdout, /trial-01 {2}reward 1\.0 \(timeout\)/);
    const leftovers = [];
    for (const pid of await fs.readdir("/proc")) {
      const cmd = await fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (cmd === "sleep\u00001000\u0000") leftovers.push(pid);
    }
    assert.deepEqual(leftovers, [], "no process of the agent survives its timeout");
  });

  it("keeps the tests out of the sandbox while the agent runs", async () => {
    const run = await runFixture(["peek"]);
    assert.equal(run.code, 0, run.stderr);
    const [r] = await rollouts(path.join(scratch(), "peek"));
    const seen = await fs.readFile(path.join(r?.dir ?? "", "agent/oracle.txt"), "utf8");
    assert.match(seen, /tests_dir: hidden/);
    assert.match(seen, /verifier_dir: hidden/);
    assert.match(seen, /solution_dir: visible/, "the oracle sees its own solution");
  });
});
