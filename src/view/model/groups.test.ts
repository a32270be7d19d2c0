import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { writeGroup, writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { armsOf } from "./arms.js";
import { groupByFor, groupsOf } from "./groups.js";
import { RunIndex } from "./run-index.js";
import { summaryFromIndex } from "./run-summary.js";

describe("the viewer's groups", () => {
  it("groups a run's trial-NN repeats by its identity by default; job in --group-by splits them", async () => {
    const repeats = tmp("bf-vg-");
    writeGroup(repeats, { task: "t", rewards: [0, 1] });
    const index = await RunIndex.open(repeats);
    const by = groupByFor();
    assert.deepEqual(by, ["task", "agent", "model", "run", "task_digest", "policy_version", "sampling"]);
    const [group] = groupsOf(index, by, "grpo");
    assert.equal(group?.members.length, 2);
    assert.equal(group?.key.run, "2026-01-01__12-00-00");
    assert.equal(group?.key.sampling, "default");
    // The user's keys win; with job, every trial-NN repeat is a group of its own.
    assert.equal(groupsOf(index, groupByFor("task,agent,model,job"), "grpo").length, 2);
    // Two runs in one folder, with other policy versions, stay apart.
    writeGroup(repeats, { task: "t", rewards: [1, 0], jobName: "second-run", policyVersion: "step-2" });
    const both = await RunIndex.open(repeats);
    assert.deepEqual(
      groupsOf(both, by, "grpo").map((g) => [g.key.run, g.key.policy_version, g.members.length]),
      [
        ["2026-01-01__12-00-00", null, 2],
        ["second-run", "step-2", 2],
      ],
    );
    const one = tmp("bf-vg-");
    writeJob({
      dir: path.join(one, "job"),
      rollouts: [
        { task: "t", reward: 0 },
        { task: "u", reward: 1 },
      ],
    });
    assert.equal(groupsOf(await RunIndex.open(one), by, "grpo").length, 2);
  });

  it("groups by policy version from the calls, and marks zero spread only with two scored equal rewards", async () => {
    const root = tmp("bf-vg-");
    // Results without a group identity (older ones, upstream's): the calls say the version.
    writeGroup(root, {
      task: "t",
      rewards: [1, 1, 0, 1],
      identity: false,
      each: [
        { calls: [{ policyVersion: "v1" }] },
        { calls: [{ policyVersion: "v1" }] },
        { calls: [{ policyVersion: "v2" }] },
        { calls: [{ policyVersion: "v3" }] },
      ],
    });
    const index = await RunIndex.open(root);
    const groups = groupsOf(index, ["task", "policy_version"], "grpo");
    assert.deepEqual(
      groups.map((g) => [g.key.policy_version, g.members.length, g.zeroSpread]),
      [
        ["v1", 2, true],
        ["v2", 1, false],
        ["v3", 1, false],
      ],
    );
    const arms = await armsOf(index, "policy_version");
    assert.deepEqual([...arms.keys()].sort(), ["v1", "v2", "v3"]);
  });

  it("reads the --skill-mode arm of each rollout from its config.json", async () => {
    const root = tmp("bf-vg-");
    const built = writeGroup(root, { task: "t", rewards: [1, 0, 1, 1] });
    for (const [i, b] of built.entries()) {
      const file = path.join(b.dir, "config.json");
      const config = JSON.parse(fs.readFileSync(file, "utf8"));
      fs.writeFileSync(file, JSON.stringify({ ...config, skill_mode: i < 2 ? "with-skill" : "no-skill" }));
    }
    const arms = await armsOf(await RunIndex.open(root), "skill_mode");
    assert.deepEqual(
      [...arms].map(([k, v]) => [k, v.map((r) => r.reward)]),
      [
        ["with-skill", [1, 0]],
        ["no-skill", [1, 1]],
      ],
    );
  });

  it("counts outcomes by owner and leaves replaced attempts out of the run and its groups", async () => {
    const root = tmp("bf-vg-");
    const job = path.join(root, "job");
    writeJob({
      dir: job,
      rollouts: [
        { task: "a", reward: 1 },
        { task: "b", reward: 0, error: "timeout" },
        { task: "c", reward: null, error: "sandbox_setup" },
        { task: "d", reward: null, verifierError: "verifier_failure" },
        { task: "e", result: "missing" },
        { task: "a", reward: 0, replacedBy: "a__00000000", attempt: 0 },
      ],
    });
    const s = summaryFromIndex(await RunIndex.open(root));
    assert.equal(s.run.rollouts, 5);
    assert.equal(s.run.replaced, 1);
    assert.deepEqual(s.run.outcomes, {
      scored: 1,
      policy_failure: 1,
      infrastructure_failure: 1,
      task_failure: 1,
      withheld: 1,
    });
    assert.equal(s.groups.find((g) => g.key.task === "a")?.rollouts, 1);
  });
});
