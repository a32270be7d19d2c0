// --reward-vector: upstream's verifier source, per-component advantages (§5.6), through the CLI.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { benchTrain, readRows } from "../../cli/testing/run-cli.js";
import { writeGroup } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { advantageVectors, rewardVectorOf, VERIFIER_FORMULA, vectorNamesDiffer } from "./reward-vector.js";

const close = (a: unknown, b: number) =>
  assert.ok(typeof a === "number" && Math.abs(a - b) < 1e-9, `${a} != ${b}`);

describe("rewardVectorOf", () => {
  it("keeps every finite number, nested keys joined by '.', reward first, booleans dropped", () => {
    const v = rewardVectorOf(
      { quality: 0.5, reward: 1, flag: true, note: "ok", steps: { build: 1, test: { unit: 0 } } },
      1,
    );
    assert.deepEqual(v, {
      source: "verifier",
      names: ["reward", "quality", "steps.build", "steps.test.unit"],
      kinds: ["verifier", "verifier", "verifier", "verifier"],
      weights: [null, null, null, null],
      values: [1, 0.5, 1, 0],
      formula: VERIFIER_FORMULA,
    });
    assert.equal(VERIFIER_FORMULA, "reward = rewards.reward (as written by the verifier)");
  });

  it("is null for an unscored rollout, never zeros, and leads with the reward when rewards lacks it", () => {
    assert.equal(rewardVectorOf({ quality: 0.5 }, null), null);
    assert.deepEqual(rewardVectorOf(null, 0.25)?.names, ["reward"]);
    assert.deepEqual(rewardVectorOf({ quality: 0.5 }, 0.25)?.values, [0.25, 0.5]);
  });
});

describe("advantageVectors (the scalar's worked examples, per component)", () => {
  const vec = (names: string[], values: number[]) =>
    ({ ...(rewardVectorOf({}, 0) as object), names, values }) as never;
  it("grpo over rewards 0 and 1 with two unscored members: ±0.5/(√0.5+1e-4), nulls for the unscored", () => {
    const members = [
      { reward: 0, vector: vec(["reward"], [0]) },
      { reward: 1, vector: vec(["reward"], [1]) },
      { reward: null, vector: null },
      { reward: null, vector: null },
    ];
    const adv = advantageVectors(members, "grpo");
    close(adv[0]?.[0], -0.5 / (Math.sqrt(0.5) + 1e-4));
    close(adv[1]?.[0], 0.5 / (Math.sqrt(0.5) + 1e-4));
    assert.deepEqual(adv.slice(2), [null, null]);
  });

  it("loo over (0, 0.5, 1) gives (-0.75, 0, 0.75); a component one member has gets null", () => {
    const members = [0, 0.5, 1].map((r, i) => ({
      reward: r,
      vector: i === 2 ? vec(["reward", "style"], [r, 1]) : vec(["reward"], [r]),
    }));
    const adv = advantageVectors(members, "loo");
    assert.deepEqual(adv, [[-0.75], [0], [0.75, null]]);
    assert.equal(vectorNamesDiffer(members), true);
    assert.equal(vectorNamesDiffer(members.slice(0, 2)), false);
  });
});

function setRewards(dir: string, rewards: Record<string, unknown>): void {
  const file = path.join(dir, "result.json");
  const result = JSON.parse(fs.readFileSync(file, "utf8"));
  fs.writeFileSync(file, JSON.stringify({ ...result, rewards }));
}

describe("convert --reward-vector", () => {
  it("adds reward_vector and advantage_vector to rows, and says when the members' names differ", () => {
    const root = tmp();
    const built = writeGroup(path.join(root, "jobs"), { task: "t", rewards: [0, 0.5, 1] });
    setRewards(built[0]?.dir as string, { reward: 0, tests: 0, style: { lint: 1 } });
    setRewards(built[1]?.dir as string, { reward: 0.5, tests: 1, style: { lint: 0 } });
    setRewards(built[2]?.dir as string, { reward: 1, tests: 1, ok: true });
    const r = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "rows.jsonl",
      "--manifest",
      "m.json",
      "--reward-vector",
      "--group-advantage",
      "loo",
      "--group-by",
      "task,agent,model",
    );
    assert.equal(r.code, 0, r.stderr);
    const rows = readRows(path.join(root, "rows.jsonl"));
    assert.deepEqual(
      rows.map((row) => (row.reward_vector as { names: string[] }).names),
      [
        ["reward", "tests", "style.lint"],
        ["reward", "tests", "style.lint"],
        ["reward", "tests"],
      ],
    );
    // reward: loo over (0, 0.5, 1); tests: (0, 1, 1); style.lint: only two members have it.
    assert.deepEqual(
      rows.map((row) => row.advantage_vector),
      [
        [-0.75, -1, 1],
        [0, 0.5, -1],
        [0.75, 0.5],
      ],
    );
    assert.equal(
      (rows[0]?.group as { vector_names_differ?: boolean } | undefined)?.vector_names_differ,
      true,
    );
    const m = JSON.parse(fs.readFileSync(path.join(root, "m.json"), "utf8"));
    assert.equal(m.training_signal.reward_vector, true);
    assert.equal(m.training_signal.groups[0].vector_names_differ, true);
  });

  it("without --group-advantage: a vector on each row, no advantage, and a training_signal that says so", () => {
    const root = tmp();
    writeGroup(path.join(root, "jobs"), { task: "t", rewards: [1] });
    const r = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "rows.jsonl",
      "--manifest",
      "m.json",
      "--reward-vector",
    );
    assert.equal(r.code, 0, r.stderr);
    const [row] = readRows(path.join(root, "rows.jsonl"));
    assert.deepEqual((row?.reward_vector as { values: number[] } | undefined)?.values, [1]);
    assert.equal("advantage_vector" in (row ?? {}), false);
    const m = JSON.parse(fs.readFileSync(path.join(root, "m.json"), "utf8"));
    assert.equal(m.training_signal.reward_vector, true);
    assert.equal(m.training_signal.group_advantage, null);
    assert.deepEqual(m.training_signal.groups, []);
  });
});
