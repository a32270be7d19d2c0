// The lines people read at the end of a run, in the seed's form:
// `trial-01  reward 1.0: close_enough pass, plausible_uncertainty pass, consistent pass`.
import type { EvaluationResult } from "../job/evaluation.js";
import { rewardOf } from "../job/summary.js";
import type { TrialResult } from "../schemas/result.js";

export function formatReward(reward: number): string {
  if (Number.isInteger(reward)) return reward.toFixed(1);
  return String(Number(reward.toFixed(4)));
}

export function rolloutLine(r: TrialResult, withTask: boolean): string {
  const head = withTask ? `${r.trial ?? ""}  ${r.task_name}` : `${r.trial ?? r.rollout_name}`;
  const reward = rewardOf(r);
  const lastLine = typeof r.test_last_line === "string" ? r.test_last_line : null;
  if (reward !== null) {
    const tag = r.error_category ? ` (${r.error_category})` : "";
    return `${head}  reward ${formatReward(reward)}${tag}${lastLine ? `: ${lastLine}` : ""}`;
  }
  const category =
    r.error_category && !["timeout", "agent_error"].includes(r.error_category)
      ? r.error_category
      : (r.verifier_error_category ?? r.error_category ?? "unscored");
  const message = category === r.verifier_error_category ? r.verifier_error : r.error;
  return `${head}  unscored (${category}): ${message ?? "no reward"}`;
}

export function summaryLine(result: EvaluationResult): string {
  const totals = { passed: 0, failed: 0, errored: 0, verifier_errored: 0 };
  for (const job of result.jobs) {
    totals.passed += job.summary.passed;
    totals.failed += job.summary.failed;
    totals.errored += job.summary.errored;
    totals.verifier_errored += job.summary.verifier_errored;
  }
  const rewards = result.results.map(rewardOf).filter((r): r is number => r !== null);
  const mean = rewards.length ? (rewards.reduce((a, b) => a + b, 0) / rewards.length).toFixed(3) : "n/a";
  const n = result.results.length;
  return `${n} rollout(s): ${totals.passed} passed, ${totals.failed} failed, ${totals.errored} errored, ${totals.verifier_errored} verifier error(s); mean reward ${mean}; ${result.elapsedSec.toFixed(1)}s`;
}
