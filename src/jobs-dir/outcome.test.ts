// The outcome fields, derived one way: categories filled in from the side that failed, and the
// one outcome by the table's precedence (infrastructure, user, task setup; then verifier; then policy).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RolloutResult } from "../schemas/result.js";
import { deriveOutcome } from "./outcome.js";

const result = (fields: Record<string, unknown>) =>
  RolloutResult.parse({
    task_name: "t",
    rollout_name: "t__00000001",
    agent: "a",
    model: null,
    rewards: null,
    ...fields,
  });

describe("deriveOutcome", () => {
  it("an error without a category is agent_error, and stays scored when the verifier wrote a reward", () => {
    const o = deriveOutcome(result({ error: "exit 1", rewards: { reward: 0.25 } }));
    assert.deepEqual(
      [o.errorCategory, o.outcome, o.reward, o.scoreOutcome, o.maskCategory],
      ["agent_error", "agent_error", 0.25, "failed", "agent_error"],
    );
  });

  it("a verifier error without a category is verifier_failure, unscored", () => {
    const o = deriveOutcome(result({ verifier_error: "no reward file" }));
    assert.deepEqual(
      [o.verifierErrorCategory, o.outcome, o.scoreOutcome, o.maskCategory],
      ["verifier_failure", "verifier_failure", "verifier_errored", "verifier_failure"],
    );
  });

  it("an infrastructure, user or task failure is the outcome over a verifier error; a policy one is not", () => {
    for (const c of ["provider_error", "config_error", "task_error", "sandbox_setup"])
      assert.equal(
        deriveOutcome(result({ error_category: c, verifier_error_category: "verifier_timeout" })).outcome,
        c,
      );
    const timeout = deriveOutcome(
      result({ error_category: "timeout", verifier_error_category: "verifier_timeout" }),
    );
    assert.deepEqual([timeout.outcome, timeout.maskCategory], ["verifier_timeout", "timeout"]);
  });

  it("the stored outcome field does not override the categories", () => {
    assert.equal(
      deriveOutcome(result({ error_category: "provider_error", outcome: null })).outcome,
      "provider_error",
    );
  });

  it("no readable result has no outcome and no score bucket", () => {
    assert.deepEqual(deriveOutcome(null), {
      reward: null,
      errorCategory: null,
      verifierErrorCategory: null,
      outcome: null,
      scoreOutcome: null,
      maskCategory: null,
    });
  });
});
