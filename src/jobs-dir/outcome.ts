// How a rollout ended, derived one way for every reader (loadJob, resume, convert, stream, the
// viewer), from result.json. Writers other than ours (upstream, hand-edited folders, older
// versions) may name an error without a category; such a rollout must still be maskable, so the
// category is filled in from the side that failed: `error` alone is the agent's (`agent_error`),
// `verifier_error` alone the verifier's (`verifier_failure`). The `outcome` field a writer stored
// is not trusted over the categories: our writer stores outcomeOf(categories), which we derive.
//
// One name per meaning, from result.json to the row: `category` is the outcome table's one
// category (result.json `outcome`, rows' `outcome_category`); `scoreOutcome` is upstream's bucket
// (rows' and stream records' `outcome`, summary.json's counts); `maskCategory` is what a trainer
// masks on (rows' group `error`, stream records' `error`).
import {
  Attribution,
  AttributionReason,
  attributionOf,
  MASK_REASONS,
  SCORE_REASONS,
} from "../schemas/attribution.js";
import { outcomeOf, type ScoreOutcome, scoreOutcomeOf } from "../schemas/outcome.js";
import type { RolloutResult } from "../schemas/result.js";

export interface Outcome {
  /** The one category of the outcome table (schemas/outcome.ts outcomeOf); null: it ended cleanly. */
  category: string | null;
  /** error_category, or agent_error when the result names an error but no category. */
  errorCategory: string | null;
  /** verifier_error_category, or verifier_failure when the result names a verifier error but no category. */
  verifierErrorCategory: string | null;
  /** The category a trainer masks on: the agent side first, then the verifier side. */
  maskCategory: string | null;
  /** Upstream's score bucket; null when there is no readable result. */
  scoreOutcome: ScoreOutcome | null;
  /** Score (a trainer learns from it, 0 when the verifier gave nothing) or mask; null: no readable result. */
  attribution: Attribution | null;
  attributionReason: AttributionReason | null;
  /** The messages result.json gives for each side. */
  error: string | null;
  verifierError: string | null;
}

/** No readable result (missing or cut short): nothing is known of how it ended. */
export const NO_OUTCOME: Outcome = Object.freeze({
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

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** A finite rewards.reward, else null: unscored, never 0. */
export function rewardOf(result: RolloutResult | null): number | null {
  const v = result?.rewards?.reward;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** How a rollout ended, from its result.json (null: missing or unreadable). */
export function outcomeOfResult(result: RolloutResult | null): Outcome {
  if (!result) return NO_OUTCOME;
  const reward = rewardOf(result);
  const errorCategory = text(result.error_category) ?? (text(result.error) ? "agent_error" : null);
  const verifierErrorCategory =
    text(result.verifier_error_category) ?? (text(result.verifier_error) ? "verifier_failure" : null);
  return {
    category: outcomeOf(errorCategory, verifierErrorCategory),
    errorCategory,
    verifierErrorCategory,
    maskCategory: errorCategory ?? verifierErrorCategory,
    scoreOutcome: scoreOutcomeOf({
      reward,
      error_category: errorCategory,
      verifier_error_category: verifierErrorCategory,
    }),
    ...attributionOfResult(result, reward, errorCategory, verifierErrorCategory),
    error: text(result.error),
    verifierError: text(result.verifier_error),
  };
}

/**
 * The attribution a result records, when it is one of the table's pairs; else derived from its
 * categories as a writer that knew nothing of the policy would have it: a failure that could be ours
 * is masked, as before attribution existed (upstream's older results, hand-edited folders).
 */
function attributionOfResult(
  result: RolloutResult,
  reward: number | null,
  errorCategory: string | null,
  verifierErrorCategory: string | null,
): Pick<Outcome, "attribution" | "attributionReason"> {
  const recorded = Attribution.safeParse(result.attribution);
  const reason = AttributionReason.safeParse(result.attribution_reason);
  if (recorded.success && reason.success) {
    const reasons: readonly string[] = recorded.data === "score" ? SCORE_REASONS : MASK_REASONS;
    if (reasons.includes(reason.data)) return { attribution: recorded.data, attributionReason: reason.data };
  }
  const derived = attributionOf({
    errorCategory,
    verifierErrorCategory,
    hasReward: reward !== null,
    policyActed: false,
    verifierInfra: false,
    verifierVerdict: null,
  });
  return { attribution: derived.attribution, attributionReason: derived.reason };
}

/**
 * The reward a trainer learns from: the verifier's, or 0 for a rollout scored without one (the
 * policy timed out, crashed or broke the verifier); null when masked or unreadable, never 0.
 */
export function attributedReward(result: RolloutResult | null, outcome: Outcome): number | null {
  if (outcome.attribution !== "score") return null;
  return rewardOf(result) ?? 0;
}
