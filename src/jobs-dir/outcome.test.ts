// The outcome fields, derived one way: categories filled in from the side that failed, and the
// one outcome by the table's precedence (infrastructure, user, task setup; then verifier; then policy).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RolloutResult } from "../schemas/result.js";
import { attributedReward, NO_OUTCOME, outcomeOfResult, rewardOf } from "./outcome.js";

const result = (fields: Record<string, unknown>) =>
  RolloutResult.parse({
    task_name: "t",
    rollout_name: "t__00000001",
    agent: "a",
    model: null,
    rewards: null,
    ...fields,
  });

describe("outcomeOfResult", () => {
  it("an error without a category is agent_error, and stays scored when the verifier wrote a reward", () => {
    const r = result({ error: "exit 1", rewards: { reward: 0.25 } });
    const o = outcomeOfResult(r);
    assert.deepEqual(
      [o.errorCategory, o.category, rewardOf(r), o.scoreOutcome, o.maskCategory],
      ["agent_error", "agent_error", 0.25, "failed", "agent_error"],
    );
  });

  it("a verifier error without a category is verifier_failure, unscored", () => {
    const o = outcomeOfResult(result({ verifier_error: "no reward file" }));
    assert.deepEqual(
      [o.verifierErrorCategory, o.category, o.scoreOutcome, o.maskCategory],
      ["verifier_failure", "verifier_failure", "verifier_errored", "verifier_failure"],
    );
  });

  it("an infrastructure, user or task failure is the outcome over a verifier error; a policy one is not", () => {
    for (const c of ["provider_error", "config_error", "task_error", "sandbox_setup"])
      assert.equal(
        outcomeOfResult(result({ error_category: c, verifier_error_category: "verifier_timeout" })).category,
        c,
      );
    const timeout = outcomeOfResult(
      result({ error_category: "timeout", verifier_error_category: "verifier_timeout" }),
    );
    assert.deepEqual([timeout.category, timeout.maskCategory], ["verifier_timeout", "timeout"]);
  });

  it("the stored outcome field does not override the categories", () => {
    assert.equal(
      outcomeOfResult(result({ error_category: "provider_error", outcome: null })).category,
      "provider_error",
    );
  });

  it("no readable result has no outcome and no score bucket", () => {
    assert.deepEqual(outcomeOfResult(null), {
      category: null,
      errorCategory: null,
      verifierErrorCategory: null,
      maskCategory: null,
      scoreOutcome: null,
      attribution: null,
      attributionReason: null,
      error: null,
      verifierError: null,
    });
    assert.equal(outcomeOfResult(null), NO_OUTCOME);
  });
});

describe("attribution on the read side", () => {
  it("a recorded pair is read as written; a reward a trainer learns from is 0 when scored without one", () => {
    const r = result({
      error: "the verifier could not read /app/answer.txt",
      error_category: "timeout",
      verifier_error_category: "verifier_failure",
      attribution: "score",
      attribution_reason: "verifier_error",
    });
    const o = outcomeOfResult(r);
    assert.equal(o.attribution, "score");
    assert.equal(o.attributionReason, "verifier_error");
    assert.equal(attributedReward(r, o), 0);
    assert.equal(rewardOf(r), null, "result.json's rewards stay what the verifier wrote");
  });

  it("a masked rollout has no reward, never 0", () => {
    const r = result({
      error_category: "provider_error",
      attribution: "mask",
      attribution_reason: "model_endpoint",
    });
    assert.equal(attributedReward(r, outcomeOfResult(r)), null);
  });

  it("a pair outside the table, or none (an older writer), is derived: a failure that could be ours stays masked", () => {
    const crossed = result({
      error_category: "infra_error",
      attribution: "score",
      attribution_reason: "sandbox_start",
    });
    assert.deepEqual(
      [outcomeOfResult(crossed).attribution, outcomeOfResult(crossed).attributionReason],
      ["mask", "infrastructure"],
    );
    const verifier = outcomeOfResult(result({ verifier_error: "no reward file" }));
    assert.deepEqual(
      [verifier.attribution, verifier.attributionReason],
      ["mask", "verifier_crash_clean_run"],
    );
    const timedOut = outcomeOfResult(result({ error_category: "timeout" }));
    assert.deepEqual([timedOut.attribution, timedOut.attributionReason], ["score", "timeout"]);
    const scored = outcomeOfResult(result({ rewards: { reward: 0.5 } }));
    assert.deepEqual([scored.attribution, scored.attributionReason], ["score", "scored"]);
  });
});
