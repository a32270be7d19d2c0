// The lines people read at the end of a run, in the seed's form:
// `trial-01  reward 1.0: close_enough pass, plausible_uncertainty pass, consistent pass`.
import type { EvaluationResult } from "../job/evaluation.js";
import { rewardOf } from "../job/summary.js";
import type { RolloutResult } from "../schemas/result.js";
import { printable } from "./terminal-text.js";

export function formatReward(reward: number): string {
  if (Number.isInteger(reward)) return reward.toFixed(1);
  return String(Number(reward.toFixed(4)));
}

/** One rollout's line; task-controlled text in it (last line, messages) is shown, never obeyed. */
export function rolloutLine(r: RolloutResult, withTask: boolean): string {
  return printable(rolloutText(r, withTask));
}

function rolloutText(r: RolloutResult, withTask: boolean): string {
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
  const head = `${n} rollout(s): ${totals.passed} passed, ${totals.failed} failed, ${totals.errored} errored, ${totals.verifier_errored} verifier error(s)`;
  return `${head}${failureClauses(result)}; mean reward ${mean}; ${result.elapsedSec.toFixed(1)}s`;
}

/** The failures a trainer must tell apart, only when there are any: "(2 provider_error, 1 task_error); 3 not started". */
const COUNTED = ["provider_error", "config_error", "task_error"] as const;

function failureClauses(result: EvaluationResult): string {
  const counts = COUNTED.map((c) => [c, result.results.filter((r) => r.error_category === c).length] as const)
    .filter(([, k]) => k > 0)
    .map(([c, k]) => `${k} ${c}`);
  const errored = counts.length > 0 ? ` (${counts.join(", ")})` : "";
  return `${errored}${result.notStarted > 0 ? `; ${result.notStarted} not started` : ""}`;
}

/** What a stopped run says once: why, and how to finish it. */
export function stoppedLines(result: EvaluationResult, jobName: string): string[] {
  const stopped = result.stopped;
  if (!stopped) return [];
  const why =
    stopped.reason === "config_error"
      ? `bench: stopped: the endpoint refused the configuration: ${stopped.message}`
      : `bench: stopped: ${stopped.message}`;
  return [
    why,
    `bench: ${result.notStarted} planned trial(s) not started; after fixing it, rerun the same command with --job-name ${jobName} to run only what is missing`,
  ];
}
