import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { baselineOf } from "./advantage.js";

const r3 = (xs: Array<number | null>) => xs.map((x) => (x === null ? null : Math.round(x * 1000) / 1000));

describe("baselineOf", () => {
  it("gives the seed's -0.577, 1.155, -0.577 for rewards 0, 1, 0 (grpo, sample std)", () => {
    const b = baselineOf([0, 1, 0], "grpo");
    assert.deepEqual(r3(b.advantages), [-0.577, 1.155, -0.577]);
    assert.equal(Math.round((b.std ?? 0) * 1e6) / 1e6, 0.57735);
  });

  it("gives 0 to every rollout when rewards are equal, even where the sum rounds", () => {
    assert.deepEqual(baselineOf([1, 1, 1, 1], "grpo"), { mean: 1, std: 0, advantages: [0, 0, 0, 0] });
    assert.deepEqual(baselineOf([0.1, 0.1, 0.1], "grpo").advantages, [0, 0, 0]);
    assert.deepEqual(baselineOf([0.1, 0.1, 0.1], "loo").advantages, [0, 0, 0]);
  });

  it("loo is the reward minus the mean of the others", () => {
    assert.deepEqual(baselineOf([0, 0.5, 1], "loo").advantages, [-0.75, 0, 0.75]);
    assert.deepEqual(baselineOf([0, 1], "loo").advantages, [-1, 1]);
  });

  it("one scored reward has a mean but no std and no advantage", () => {
    assert.deepEqual(baselineOf([0.5], "grpo"), { mean: 0.5, std: null, advantages: [null] });
    assert.deepEqual(baselineOf([], "grpo"), { mean: null, std: null, advantages: [] });
  });

  it("adds eps to the std so a tiny spread does not explode", () => {
    const b = baselineOf([0, 1], "grpo");
    assert.equal(b.advantages[1], 0.5 / (Math.SQRT1_2 + 0.0001));
  });
});
