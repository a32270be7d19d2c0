// [verifier] environment_mode = "separate" in the namespace sandbox: the oracle of the
// separate-verifier fixture does the honest work (workspace, an artifact outside it,
// /logs/artifacts) and plants files outside the workspace. A shared verifier sees the planted files;
// a separate one (by the task or by the run flag) does not; both see the honest work (reward 1.0).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { resolveAgent } from "../src/agents/registry.js";
import { runRollout } from "../src/rollout/run.js";
import { modelFreeIdentity } from "../src/rollout/types.js";
import { createNamespaceBackend } from "../src/sandbox/namespace/index.js";
import type { Sandbox, SandboxBackend } from "../src/sandbox/types.js";
import { WrittenRolloutResult } from "../src/schemas/result.js";
import { loadTask } from "../src/task/load.js";
import { bench, FIXTURES, rollouts, useScratch } from "./testing/bench.js";
import {
  assertHonestWorkSeen,
  assertSeparateRecords,
  fixtureCopy,
  runOracle,
  SEPARATE_FIXTURE,
} from "./testing/separate-verifier.js";

const scratch = useScratch("separate-ns");
const SEPARATE_TOML = (toml: string) =>
  toml.replace("[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n');

describe("separate verifier (namespace sandbox)", () => {
  it("shared, the default: the verifier sees what the agent planted outside the workspace", async () => {
    const r = await runOracle(SEPARATE_FIXTURE, path.join(scratch(), "jobs-shared"), "namespace");
    assertHonestWorkSeen(r);
    // The agent here is not root: it plants where any user may write (/tmp, /var/tmp, its home).
    assert.ok(r.planted.length > 0, "a shared verifier inherits the agent's sandbox");
    assert.ok(!r.planted.includes("/etc/bf-planted"), r.planted.join(" "));
    assert.equal(r.config.verifier_environment_mode, "shared");
    assert.equal(r.result.timing.verifier_environment_setup, undefined);
  });

  it("--verifier-environment-mode separate: only the workspace and the artifacts reach the verifier", async () => {
    const r = await runOracle(SEPARATE_FIXTURE, path.join(scratch(), "jobs-flag"), "namespace", [
      "--verifier-environment-mode",
      "separate",
    ]);
    assertHonestWorkSeen(r);
    assert.deepEqual(r.planted, []);
    await assertSeparateRecords(r);
  });

  it('environment_mode = "separate" in task.toml does the same, and the flag "shared" overrides it', async () => {
    const task = await fixtureCopy(path.join(scratch(), "tasks"), "separate-by-task", SEPARATE_TOML);
    const r = await runOracle(task, path.join(scratch(), "jobs-task"), "namespace");
    assertHonestWorkSeen(r);
    assert.deepEqual(r.planted, []);
    await assertSeparateRecords(r);
    const back = await runOracle(task, path.join(scratch(), "jobs-task-shared"), "namespace", [
      "--verifier-environment-mode",
      "shared",
    ]);
    assertHonestWorkSeen(back);
    assert.ok(back.planted.length > 0);
    assert.equal(back.config.verifier_environment_mode, "shared");
  });

  it("a verifier sandbox that does not start is sandbox_setup, unscored, and no sandbox is left", async () => {
    const task = await loadTask(
      await fixtureCopy(path.join(scratch(), "tasks"), "no-verifier-box", SEPARATE_TOML),
    );
    const real = createNamespaceBackend();
    const made: Sandbox[] = [];
    // The agent's sandbox is real; the verifier's start fails as an engine's would.
    const backend: SandboxBackend = {
      kind: real.kind,
      unavailableReason: () => real.unavailableReason(),
      create: async (spec) => {
        if (made.length > 0) throw new Error("no room for another sandbox");
        const sandbox = await real.create(spec);
        made.push(sandbox);
        return sandbox;
      },
    };
    const jobDir = path.join(scratch(), "jobs-fail");
    const warnings: string[] = [];
    const result = await runRollout({
      run: {
        jobName: "fail",
        agent: resolveAgent("oracle"),
        model: null,
        backend,
        agentEnv: {},
        verifierHardening: "on",
        record: { sandbox: "namespace", concurrency: 1, trials: 1, policy: null },
        groupIdentity: modelFreeIdentity("fail", "oracle"),
      },
      job: { dir: jobDir, repeat: "trial-01" },
      task,
      taskDigest: "test",
      rolloutName: "no-verifier-box__00000001",
      attempt: 1,
      replaces: null,
      signal: new AbortController().signal,
      warn: (w) => warnings.push(w),
    });
    assert.equal(result.error_category, "sandbox_setup", result.error ?? "");
    assert.equal(result.outcome, "sandbox_setup");
    assert.equal(result.rewards, null, "unscored, never a 0");
    assert.match(
      result.error ?? "",
      /the separate verifier's sandbox did not start: no room for another sandbox/,
    );
    assert.equal(made.length, 1);
    await assert.rejects(
      made[0]?.exec("true") ?? Promise.resolve(),
      /stopped/,
      "the agent's sandbox is stopped",
    );
    const written = JSON.parse(
      await fs.readFile(path.join(jobDir, "no-verifier-box__00000001/result.json"), "utf8"),
    );
    assert.equal(written.error_category, "sandbox_setup");
  });
});

describe("the plan: a root agent with a shared verifier, and the flag", () => {
  async function rootTasks(): Promise<string> {
    const root = path.join(scratch(), "root-tasks");
    for (const name of ["root-a", "root-b"]) {
      await fixtureCopy(root, name, (t) => t.replace("[agent]\n", '[agent]\nuser = "root"\n'));
    }
    await fixtureCopy(root, "root-separate", (t) =>
      SEPARATE_TOML(t.replace("[agent]\n", '[agent]\nuser = "root"\n')),
    );
    return root;
  }

  it("says once which exploit families stay open, naming the tasks, and suggests separate", async () => {
    const root = await rootTasks();
    const jobs = path.join(scratch(), "jobs-plan");
    const run = await bench([
      "run",
      root,
      "-a",
      "oracle",
      "--sandbox",
      "namespace",
      "--jobs-dir",
      jobs,
      "--dry-run",
    ]);
    assert.equal(run.code, 0, run.stderr);
    const warnings: string[] = JSON.parse(run.stdout).warnings;
    const open = warnings.filter((w) => w.includes("run their agent as root"));
    assert.equal(open.length, 1, warnings.join("\n"));
    assert.match(open[0] ?? "", /^2 task\(s\) run their agent as root .*\(root-a, root-b\)/);
    assert.ok(!open[0]?.includes("root-separate"), "a task with a separate verifier is not named");
    assert.ok(open[0]?.includes('environment_mode = "separate"'));
    assert.ok(open[0]?.includes("--verifier-environment-mode separate"));
    const flagged = await bench([
      ...["run", root, "-a", "oracle", "--sandbox", "namespace", "--jobs-dir", jobs, "--dry-run"],
      ...["--verifier-environment-mode", "separate"],
    ]);
    assert.equal(flagged.code, 0, flagged.stderr);
    const none = JSON.parse(flagged.stdout).warnings.filter((w: string) => w.includes("as root"));
    assert.deepEqual(none, []);
  });

  it("refuses a value of the flag that is not shared or separate", async () => {
    const run = await bench([
      "run",
      SEPARATE_FIXTURE,
      "-a",
      "oracle",
      "--dry-run",
      "--verifier-environment-mode",
      "apart",
    ]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /expected shared or separate, got "apart"/);
  });
});

describe("separate verifier per step (namespace sandbox)", () => {
  /** three-steps, whose step one also plants a file that step two's verifier must not find. */
  async function plantingSteps(): Promise<string> {
    const task = path.join(scratch(), "tasks", "planting-steps");
    await fs.cp(path.join(FIXTURES, "three-steps"), task, { recursive: true });
    await fs.appendFile(
      path.join(task, "steps/one/solution/solve.sh"),
      "echo planted > /var/tmp/bf-planted\n",
    );
    await fs.appendFile(
      path.join(task, "steps/two/tests/test.sh"),
      "[ -e /var/tmp/bf-planted ] && echo 0 > /logs/verifier/reward.txt\nexit 0\n",
    );
    return task;
  }

  it("shared: step two's verifier finds what step one's agent planted, and the rollout stops there", async () => {
    const task = await plantingSteps();
    const jobs = path.join(scratch(), "jobs-steps-shared");
    const run = await bench(["run", task, "-a", "oracle", "--sandbox", "namespace", "--jobs-dir", jobs]);
    const [found] = await rollouts(jobs);
    const steps = found?.result?.step_results ?? [];
    assert.deepEqual(
      steps.map((s: Record<string, any>) => [s.step_name, s.rewards?.reward]),
      [
        ["one", 1],
        ["two", 0],
      ],
      `${run.stdout}${run.stderr}`,
    );
  });

  it("separate: each step's verifier gets a fresh sandbox with the workspace so far, and all three pass", async () => {
    const task = await plantingSteps();
    const jobs = path.join(scratch(), "jobs-steps-separate");
    const run = await bench([
      ...["run", task, "-a", "oracle", "--sandbox", "namespace", "--jobs-dir", jobs],
      ...["--verifier-environment-mode", "separate"],
    ]);
    const [found] = await rollouts(jobs);
    const result = found?.result;
    assert.equal(result?.rewards?.reward, 1, `${run.stdout}${run.stderr}`);
    const steps = result?.step_results ?? [];
    // Step three's test reads all three files: the workspace carried over through the agent's sandbox.
    assert.deepEqual(
      steps.map((s: Record<string, any>) => [s.step_name, s.rewards?.reward]),
      [
        ["one", 1],
        ["two", 1],
        ["three", 1],
      ],
    );
    for (const s of steps) assert.equal(typeof s.timing.verifier_environment_setup, "number", s.step_name);
    WrittenRolloutResult.parse(result);
    const config = JSON.parse(await fs.readFile(path.join(found?.dir ?? "", "config.json"), "utf8"));
    assert.equal(config.verifier_environment_mode, "separate");
  });
});
