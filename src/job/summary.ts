// summary.json: the job's counts. passed + failed + errored + verifier_errored == total, and
// scored + masked == total for our results: the mean is over the scored ones, the masked share beside it.
import { scoreOutcomeOf } from "../schemas/outcome.js";
import type { JobSummary, RolloutResult } from "../schemas/result.js";

/** summary.json fields upstream writes as floats (`1.0`), whatever their value. */
export const SUMMARY_FLOATS: ReadonlySet<string> = new Set(["mean_reward", "score_ratio"]);

export function rewardOf(r: RolloutResult): number | null {
  const reward = r.rewards?.reward;
  return typeof reward === "number" && Number.isFinite(reward) ? reward : null;
}

export function summarize(
  results: RolloutResult[],
  info: {
    jobName: string;
    agent: string;
    model: string | null;
    environment: string;
    concurrency: number;
    startedAt: Date;
    notStarted?: number;
    stopped?: JobSummary["stopped"];
  },
): JobSummary {
  const counts = { passed: 0, failed: 0, errored: 0, verifier_errored: 0 };
  const errorCategories: Record<string, number> = {};
  const verifierErrorCategories: Record<string, number> = {};
  const scored: number[] = [];
  let masked = 0;
  for (const r of results) {
    const reward = rewardOf(r);
    // The mean is a trainer's: every rollout scored (0 where the policy broke its own run), none masked.
    if (r.attribution === "mask") masked++;
    else if (reward !== null || r.attribution === "score") scored.push(reward ?? 0);
    counts[
      scoreOutcomeOf({
        reward,
        error_category: r.error_category,
        verifier_error_category: r.verifier_error_category,
      })
    ]++;
    if (r.error_category) errorCategories[r.error_category] = (errorCategories[r.error_category] ?? 0) + 1;
    if (r.verifier_error_category) {
      verifierErrorCategories[r.verifier_error_category] =
        (verifierErrorCategories[r.verifier_error_category] ?? 0) + 1;
    }
  }
  const total = results.length;
  const ratio = total === 0 ? 0 : counts.passed / total;
  const finishedAt = new Date();
  return {
    job_name: info.jobName,
    agent: info.agent,
    model: info.model,
    environment: info.environment,
    concurrency: info.concurrency,
    total,
    ...counts,
    error_categories: errorCategories,
    verifier_error_categories: verifierErrorCategories,
    mean_reward: scored.length === 0 ? null : scored.reduce((a, b) => a + b, 0) / scored.length,
    scored: scored.length,
    masked,
    score: `${(ratio * 100).toFixed(1)}%`,
    score_ratio: ratio,
    elapsed_sec: (finishedAt.getTime() - info.startedAt.getTime()) / 1000,
    started_at: info.startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    not_started: info.notStarted ?? 0,
    stopped: info.stopped ?? null,
    cost_usd: costOfJob(results),
  };
}

/** What the job's rollouts cost (agent_result.cost_usd summed), null when none of them has a cost. */
function costOfJob(results: readonly RolloutResult[]): number | null {
  const costs = results
    .map((r) => r.agent_result?.cost_usd)
    .filter((c): c is number => typeof c === "number");
  return costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
}
