import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { combineStepRewards, minRewardStop } from "./step-reward.js";

describe("multi-step rewards (Harbor's rules)", () => {
  it("mean: the per-key mean over the scored steps, a missing key counting 0, each step's reward kept by name", () => {
    const combined = combineStepRewards(
      [
        { name: "a", rewards: { reward: 1, style: 1 } },
        { name: "b", rewards: { reward: 0.5 } },
      ],
      "mean",
    );
    assert.deepEqual(combined, { reward: 0.75, style: 0.5, a: 1, b: 0.5 });
  });

  it("final: the last executed step's rewards, with every step's reward by name", () => {
    const combined = combineStepRewards(
      [
        { name: "a", rewards: { reward: 1, style: 1 } },
        { name: "b", rewards: { reward: 0.25, x: 0 } },
      ],
      "final",
    );
    assert.deepEqual(combined, { reward: 0.25, x: 0, a: 1, b: 0.25 });
  });

  it("min_reward: a number gates reward, a table gates each key, a missing key counts as -inf", () => {
    assert.equal(minRewardStop(null, { reward: 0 }), null);
    assert.equal(minRewardStop(0.5, { reward: 0.5 }), null);
    assert.match(minRewardStop(0.5, { reward: 0.4 }) ?? "", /reward = 0.4 is below 0.5/);
    assert.equal(minRewardStop({ a: 1, b: 0.5 }, { reward: 0, a: 1, b: 0.7 }), null);
    assert.match(minRewardStop({ a: 1, b: 0.5 }, { reward: 1, a: 1 }) ?? "", /b = missing is below 0.5/);
    assert.match(minRewardStop(0, null) ?? "", /reward = missing/);
  });
});
