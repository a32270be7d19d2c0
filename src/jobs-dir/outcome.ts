// The outcome fields of one rollout, derived one way for every reader (loadJob, resume, convert,
// stream). Writers other than ours (upstream, hand-edited folders, older versions) may name an error
// without a category; such a rollout must still be maskable, so the category is filled in from the
// side that failed: `error` alone is the agent's (`agent_error`), `verifier_error` alone the
// verifier's (`verifier_failure`). The `outcome` field a writer stored is not trusted over the
// categories: our writer stores outcomeOf(categories), which is what we derive.
import { outcomeOf, type ScoreOutcome, scoreOutcomeOf } from "../schemas/outcome.js";
import type { RolloutResult } from "../schemas/result.js";

export interface RolloutOutcome {
  /** A finite rewards.reward, else null: unscored, never 0. */
  reward: number | null;
  /** error_category, or agent_error when the result names an error but no category. */
  errorCategory: string | null;
  /** verifier_error_category, or verifier_failure when the result names a verifier error but no category. */
  verifierErrorCategory: string | null;
  /** The one outcome (schemas/outcome.ts outcomeOf): null when the rollout ended cleanly. */
  outcome: string | null;
  /** Upstream's score bucket; null when there is no readable result. */
  scoreOutcome: ScoreOutcome | null;
  /** The category a trainer masks on: the agent side first, then the verifier side. */
  maskCategory: string | null;
}

const NO_RESULT: RolloutOutcome = {
  reward: null,
  errorCategory: null,
  verifierErrorCategory: null,
  outcome: null,
  scoreOutcome: null,
  maskCategory: null,
};

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

export function rewardOf(result: RolloutResult | null): number | null {
  const v = result?.rewards?.reward;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** The outcome fields of a rollout from its result.json (null: missing or unreadable). */
export function deriveOutcome(result: RolloutResult | null): RolloutOutcome {
  if (!result) return NO_RESULT;
  const reward = rewardOf(result);
  const errorCategory = text(result.error_category) ?? (text(result.error) ? "agent_error" : null);
  const verifierErrorCategory =
    text(result.verifier_error_category) ?? (text(result.verifier_error) ? "verifier_failure" : null);
  return {
    reward,
    errorCategory,
    verifierErrorCategory,
    outcome: outcomeOf(errorCategory, verifierErrorCategory),
    scoreOutcome: scoreOutcomeOf({
      reward,
      error_category: errorCategory,
      verifier_error_category: verifierErrorCategory,
    }),
    maskCategory: errorCategory ?? verifierErrorCategory,
  };
}
