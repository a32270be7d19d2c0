import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveReward } from "./reward.js";

const unit: [number, number] = [0, 1];

describe("resolveReward", () => {
  it("reads a number from reward.txt", () => {
    assert.deepEqual(resolveReward({ txt: "0.5\n" }, unit), {
      ok: true,
      rewards: { reward: 0.5 },
      rule: "reward_txt",
    });
    assert.deepEqual(resolveReward({ txt: " 1 " }, unit), {
      ok: true,
      rewards: { reward: 1 },
      rule: "reward_txt",
    });
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
    assert.deepEqual(resolveReward({ txt: "-0.5" }, [-1, 1]), {
      ok: true,
      rewards: { reward: -0.5 },
      rule: "reward_txt",
    });
  });

  it("lets reward.json win and keeps its other fields", () => {
    const v = resolveReward({ json: '{"reward": 0.25, "close_enough": 1}' }, unit);
    assert.deepEqual(v, { ok: true, rewards: { reward: 0.25, close_enough: 1 }, rule: "reward_key" });
  });

  it("fails closed when reward.json and reward.txt disagree, and accepts them when they agree", () => {
    const bad = resolveReward({ json: '{"reward": 0.5}', txt: "1" }, unit);
    assert.ok(bad && !bad.ok);
    assert.match(bad.message, /reward.json says 0.5 but reward.txt says 1/);
    const good = resolveReward({ json: '{"reward": 0.6667}', txt: "0.6667" }, unit);
    assert.deepEqual(good, { ok: true, rewards: { reward: 0.6667 }, rule: "reward_key" });
  });

  it("aggregates a metrics map by the named aggregation", () => {
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

  it("keeps every key of a multi-key file and takes the mean when it declares nothing (Harbor's metric)", () => {
    const v = resolveReward({ json: '{"correctness": 1, "style": 0.5}' }, unit);
    assert.deepEqual(v, {
      ok: true,
      rewards: { reward: 0.75, correctness: 1, style: 0.5 },
      rule: "mean_of_keys",
    });
    const out = resolveReward({ json: '{"a": 1, "b": 3}' }, unit);
    assert.ok(out && !out.ok);
    assert.match(out.message, /reward 2 \(the mean of keys\) is outside the task's reward range \[0, 1\]/);
  });

  it("takes reward.txt as the scalar beside a reward.json without a reward key (upstream's compatibility)", () => {
    const v = resolveReward({ json: '{"correctness": 1, "style": 0}', txt: "1" }, unit);
    assert.deepEqual(v, { ok: true, rewards: { reward: 1, correctness: 1, style: 0 }, rule: "reward_txt" });
  });

  it("applies upstream's aggregate block inside reward.json", () => {
    const of = (json: string) => {
      const v = resolveReward({ json }, unit);
      assert.ok(v?.ok, json);
      assert.equal(v.rule, "aggregate");
      return v.rewards;
    };
    assert.deepEqual(of('{"a": 1, "b": 0, "aggregate": {"method": "mean"}}'), { reward: 0.5, a: 1, b: 0 });
    assert.equal(of('{"a": 1, "b": 0, "aggregate": {"method": "all_pass"}}').reward, 0);
    assert.equal(of('{"a": 1, "b": 0, "aggregate": {"method": "any_pass"}}').reward, 1);
    assert.equal(of('{"a": 0.6, "b": 0.7, "aggregate": {"method": "all_pass", "threshold": 0.5}}').reward, 1);
    assert.equal(
      of('{"a": 1, "b": 0, "aggregate": {"method": "weighted_sum", "weights": {"a": 0.25, "b": 1}}}').reward,
      0.25,
    );
    assert.equal(
      of('{"a": 1, "b": 0, "aggregate": {"method": "threshold", "threshold": 0.5, "weights": {"a": 3}}}')
        .reward,
      1,
    );
    assert.equal(of('{"a": 1, "b": 0, "aggregate": {"method": "threshold", "threshold": 0.8}}').reward, 0);
  });

  it("explains malformed reward.json", () => {
    for (const [json, fragment] of [
      ["{", "not valid JSON"],
      ["[1]", "got array"],
      ['{"reward": "1"}', 'key "reward" must be a finite number'],
      ['{"reward": 1, "passed": true}', 'key "passed" must be a finite number.*1 or 0'],
      ['{"reward": 1, "note": "ok"}', 'key "note" must be a finite number'],
      ["{}", "empty"],
      ['{"a": 1, "aggregate": "median"}', 'method "median" is unknown'],
      ['{"a": 1, "aggregate": {"method": "threshold"}}', 'needs a numeric "threshold"'],
    ]) {
      const v = resolveReward({ json }, unit);
      assert.ok(v && !v.ok);
      assert.match(v.message, new RegExp(fragment as string));
    }
  });
});
