// bench train on multi-step rollouts that bench run really wrote (bench-agent on the scripted
// policy, a model call in each step): one row per rollout in rollout mode, its combined reward in the
// group advantage; in exchange mode each row names the step its call was made in.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { Evaluation } from "../src/job/evaluation.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, FIXTURES, REPO, useScratch } from "./testing/bench.js";

const scratch = useScratch("train-steps");
const lines = async (file: string) =>
  (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

async function runWith(policyFile: string, jobName: string): Promise<void> {
  const policy = await startScriptedEndpoint({
    script: await loadEndpointScript(path.join(REPO, "test/fixtures/policies", policyFile)),
  });
  try {
    const run = await new Evaluation({
      tasks: path.join(FIXTURES, "three-steps"),
      agent: "bench-agent",
      model: "vllm/scripted",
      jobsDir: path.join(scratch(), "jobs"),
      jobName,
      sandbox: "namespace",
      env: {},
      policy: { baseUrl: policy.baseUrl },
    }).run();
    assert.equal(run.exitCode, 0);
  } finally {
    await policy.close();
  }
}

describe("bench train on multi-step rollouts", () => {
  before(async () => {
    // Two rollouts of one group: every step right (1.0), and step three wrong (mean 2/3).
    await runWith("three-steps.json", "right");
    await runWith("three-steps-wrong-three.json", "wrong-three");
  });

  const convert = async (mode: string) => {
    const out = path.join(scratch(), `${mode}.jsonl`);
    const run = await bench([
      "train",
      "convert",
      path.join(scratch(), "jobs"),
      "--out",
      out,
      "--row-mode",
      mode,
      "--group-advantage",
      "loo",
      "--group-by",
      "task,agent,model",
      "--manifest",
      path.join(scratch(), `${mode}-manifest.json`),
    ]);
    assert.equal(run.code, 0, run.stderr);
    return lines(out);
  };

  it("rollout mode: one row per rollout, the combined reward and every rewards key, in the group advantage", async () => {
    const rows = await convert("rollout");
    assert.equal(rows.length, 2);
    const byReward = rows.sort((a, b) => a.reward - b.reward);
    const [wrong, right] = byReward;
    assert.ok(Math.abs(wrong.reward - 2 / 3) < 1e-9);
    assert.deepEqual(wrong.rewards, { reward: wrong.reward, one: 1, two: 1, three: 0 });
    assert.deepEqual(right.rewards, { reward: 1, one: 1, two: 1, three: 1 });
    // loo: each rollout's combined reward against the other's.
    assert.ok(Math.abs(right.advantage - 1 / 3) < 1e-9);
    assert.ok(Math.abs(wrong.advantage + 1 / 3) < 1e-9);
    assert.ok(Math.abs(right.group.mean - 5 / 6) < 1e-9);
    for (const row of rows) assert.equal(row.step, undefined);
    const manifest = JSON.parse(await fs.readFile(path.join(scratch(), "rollout-manifest.json"), "utf8"));
    const members = manifest.training_signal.groups.flatMap(
      (g: { members: { rewards?: Record<string, number> }[] }) => g.members,
    );
    assert.deepEqual(
      members.map((m: { rewards?: Record<string, number> }) => m.rewards?.three).sort(),
      [0, 1],
    );
  });

  it("exchange mode: each row names the step its call was made in, in order", async () => {
    const rows = await convert("exchange");
    for (const rollout of new Set(rows.map((r) => r.rollout))) {
      const own = rows
        .filter((r) => r.rollout === rollout)
        .sort((a, b) => a.exchange_index - b.exchange_index);
      assert.deepEqual(
        own.map((r) => r.step),
        ["one", "one", "two", "two", "three", "three"],
      );
      // The row's last user message is the step's own instruction.
      const stepTwo = own.find((r) => r.step === "two");
      assert.ok(
        stepTwo.messages.some(
          (m: { role: string; content: unknown }) =>
            m.role === "user" && String(m.content).includes("seed.txt"),
        ),
      );
    }
  });
});
