import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveReward } from "./reward.js";

const unit: [number, number] = [0, 1];

describe("resolveReward", () => {
  it("reads a number from reward.txt", () => {
    assert.deepEqual(resolveReward({ txt: "0.5\n" }, unit), { ok: true, rewards: { reward: 0.5 } });
    assert.deepEqual(resolveReward({ txt: " 1 " }, unit), { ok: true, rewards: { reward: 1 } });
  });

  it("returns null when no reward file exists (a verifier error, never 0)", () => {
    assert.equal(resolveReward({}, unit), null);
  });

  it("refuses text, NaN, infinity and empty files with a reason", () => {
    for (const [txt, fragment] of [
      ["abc", 'got "abc"'],
      ["nan", "NaN"],
      ["-inf", "infinity"],
      ["", "empty"],
      ["1 2", "one number"],
    ]) {
      const v = resolveReward({ txt }, unit);
      assert.ok(v && !v.ok, `expected a refusal for ${JSON.stringify(txt)}`);
      assert.match(v.message, new RegExp(fragment as string));
    }
  });

  it("refuses a reward outside the task's range, and accepts a widened range", () => {
    const v = resolveReward({ txt: "7" }, unit);
    assert.ok(v && !v.ok);
    assert.match(v.message, /outside the task's reward range \[0, 1\]/);
    assert.deepEqual(resolveReward({ txt: "-0.5" }, [-1, 1]), { ok: true, rewards: { reward: -0.5 } });
  });

  it("lets reward.json win and keeps its other fields", () => {
    const v = resolveReward({ json: '{"reward": 0.25, "close_enough": 1}' }, unit);
    assert.deepEqual(v, { ok: true, rewards: { reward: 0.25, close_enough: 1 } });
  });

  it("fails closed when reward.json and reward.txt disagree, and accepts them when they agree", () => {
    const bad = resolveReward({ json: '{"reward": 0.5}', txt: "1" }, unit);
    assert.ok(bad && !bad.ok);
    assert.match(bad.message, /reward.json says 0.5 but reward.txt says 1/);
    const good = resolveReward({ json: '{"reward": 0.6667}', txt: "0.6667" }, unit);
    assert.deepEqual(good, { ok: true, rewards: { reward: 0.6667 } });
  });

  it("aggregates a metrics map by the named policy", () => {
    const mean = resolveReward({ json: '{"metrics": {"a": 1, "b": 0}}' }, unit);
    assert.ok(mean?.ok);
    assert.equal(mean.rewards.reward, 0.5);
    const weighted = resolveReward(
      { json: '{"metrics": {"a": 1, "b": 0}, "aggregate": "weighted_mean", "weights": {"a": 3, "b": 1}}' },
      unit,
    );
    assert.ok(weighted?.ok);
    assert.equal(weighted.rewards.reward, 0.75);
  });

  it("explains malformed reward.json", () => {
    for (const [json, fragment] of [
      ["{", "not valid JSON"],
      ["[1]", "got array"],
      ['{"reward": "1"}', "must be a number"],
      ['{"score": 1}', 'no "reward" field'],
    ]) {
      const v = resolveReward({ json }, unit);
      assert.ok(v && !v.ok);
      assert.match(v.message, new RegExp(fragment as string));
    }
  });
});
