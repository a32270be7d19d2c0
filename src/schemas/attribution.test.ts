import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AttributionFacts,
  attributionOf,
  isScoreReason,
  MASK_REASONS,
  SCORE_REASONS,
} from "./attribution.js";
import { isRetryable } from "./outcome.js";

const clean: AttributionFacts = {
  errorCategory: null,
  verifierErrorCategory: null,
  hasReward: true,
  policyActed: true,
  verifierInfra: false,
  verifierVerdict: null,
};
const of = (f: Partial<AttributionFacts>) => {
  const a = attributionOf({ ...clean, ...f });
  return `${a.attribution}/${a.reason}`;
};

test("a verifier's reward is scored, after a timeout too", () => {
  assert.equal(of({}), "score/scored");
  assert.equal(of({ errorCategory: "timeout" }), "score/scored");
  assert.equal(of({ errorCategory: "timeout", hasReward: false }), "score/timeout");
});

test("a crash or a lost sandbox after the policy acted is the policy's (0), before it acted is ours", () => {
  assert.equal(of({ errorCategory: "agent_error", hasReward: false }), "score/run_error");
  assert.equal(of({ errorCategory: "infra_error", hasReward: false }), "score/run_error");
  assert.equal(
    of({ errorCategory: "infra_error", hasReward: false, policyActed: false }),
    "mask/infrastructure",
  );
});

test("what the policy cannot cause is masked, whatever it did before", () => {
  assert.equal(of({ errorCategory: "sandbox_setup", hasReward: false }), "mask/sandbox_start");
  assert.equal(of({ errorCategory: "agent_setup", hasReward: false }), "mask/agent_setup");
  assert.equal(of({ errorCategory: "provider_error", hasReward: false }), "mask/model_endpoint");
  assert.equal(of({ errorCategory: "interrupted", hasReward: false }), "mask/interrupted");
  assert.equal(of({ errorCategory: "task_error", hasReward: false }), "mask/task_error");
  assert.equal(of({ errorCategory: "config_error", hasReward: false }), "mask/config_error");
});

test("a verifier failure is charged to the policy only when its controls prove the verifier sound", () => {
  const failed = { verifierErrorCategory: "verifier_failure", hasReward: false };
  assert.equal(of({ ...failed, verifierVerdict: "sound" }), "score/verifier_error");
  assert.equal(of({ ...failed, verifierVerdict: "crashes_on_clean_run" }), "mask/verifier_crash_clean_run");
  assert.equal(of({ ...failed, verifierVerdict: "unproven" }), "mask/verifier_unproven");
  assert.equal(of({ ...failed, verifierVerdict: null }), "mask/verifier_unproven");
  assert.equal(
    of({ ...failed, verifierVerdict: "sound", policyActed: false }),
    "mask/verifier_crash_clean_run",
  );
  // The verifier's infrastructure (it could not start): the same controls decide.
  const infra = { errorCategory: "infra_error", verifierInfra: true, hasReward: false };
  assert.equal(of({ ...infra, verifierVerdict: "sound" }), "score/verifier_error");
  assert.equal(of({ ...infra, verifierVerdict: "crashes_on_clean_run" }), "mask/verifier_infra");
  // After a timeout the verifier failing is judged the same way.
  assert.equal(of({ ...failed, errorCategory: "timeout", verifierVerdict: "sound" }), "score/verifier_error");
});

test("every reason is on one side only, and only masked infrastructure is retried", () => {
  for (const r of SCORE_REASONS) assert.ok(!(MASK_REASONS as readonly string[]).includes(r), r);
  assert.ok(isScoreReason("run_error") && !isScoreReason("verifier_infra"));
  assert.equal(isRetryable("infra_error", "mask"), true);
  assert.equal(isRetryable("infra_error", "score"), false);
  assert.equal(isRetryable("interrupted", "mask"), false);
  assert.equal(isRetryable("timeout", "score"), false);
});
