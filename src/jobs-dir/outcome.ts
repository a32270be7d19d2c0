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
    error: text(result.error),
    verifierError: text(result.verifier_error),
  };
}
