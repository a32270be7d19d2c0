// The lines people read at the end of a run, in the seed's form:
// `trial-01  reward 1.0: close_enough pass, plausible_uncertainty pass, consistent pass`.
import type { EvaluationResult } from "../job/evaluation.js";
import { hostedProvider } from "../job/providers.js";
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

/**
 * The seed's line on what the rollouts that called a model spent: "Each rollout cost about $0.01
 * (190,000 to 270,000 tokens) and took 2 to 5 minutes." Null when no rollout called a model, and for
 * a model you serve without --price (its cost is yours to know); a hosted model the price table does
 * not list says its tokens and how to give the price.
 */
export function costLine(results: readonly RolloutResult[]): string | null {
  const used = results.filter((r) => (r.agent_result?.total_tokens ?? 0) > 0);
  if (used.length === 0) return null;
  const tokens = used.map((r) => r.agent_result?.total_tokens ?? 0);
  const costs = used.map((r) => r.agent_result?.cost_usd).filter((c): c is number => typeof c === "number");
  const secs = used
    .map((r) =>
      r.started_at && r.finished_at ? (Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000 : null,
    )
    .filter((s): s is number => s !== null && Number.isFinite(s));
  const span = (lo: number, hi: number, show: (n: number) => string) =>
    show(lo) === show(hi) ? show(lo) : `${show(lo)} to ${show(hi)}`;
  const tokenText = `${span(Math.min(...tokens), Math.max(...tokens), (n) => n.toLocaleString("en-US"))} tokens`;
  const took = secs.length > 0 ? ` and took ${durationSpan(Math.min(...secs), Math.max(...secs), span)}` : "";
  const each = used.length === 1 ? "The rollout" : "Each rollout";
  if (costs.length === used.length) {
    const mean = costs.reduce((a, b) => a + b, 0) / costs.length;
    const total = costs.reduce((a, b) => a + b, 0);
    const run = used.length > 1 ? `; ${usd(total)} in all` : "";
    return `${each} cost about ${usd(mean)} (${tokenText})${took}${run}.`;
  }
  const provider = String(used[0]?.model ?? "").split("/")[0] ?? "";
  if (!hostedProvider(provider)) return null;
  return `${each} used ${tokenText}${took}; cost unknown (the price table has no ${used[0]?.model}: pass --price IN,OUT).`;
}

/** Dollars as a person reads them: two significant figures below a cent. */
function usd(n: number): string {
  if (n === 0) return "$0";
  if (n < 0.01) return `$${Number(n.toPrecision(2))}`;
  return `$${n.toFixed(2)}`;
}

function durationSpan(
  lo: number,
  hi: number,
  span: (a: number, b: number, f: (n: number) => string) => string,
): string {
  const words = (text: string, unit: string) => `${text} ${unit}${text === "1" ? "" : "s"}`;
  if (hi >= 120) return words(span(Math.floor(lo / 60), Math.ceil(hi / 60), String), "minute");
  return words(span(Math.max(1, Math.round(lo)), Math.max(1, Math.round(hi)), String), "second");
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
  const fix =
    stopped.reason === "max_cost_usd"
      ? "with a larger --max-cost-usd (or none), rerun"
      : "after fixing it, rerun";
  return [
    why,
    `bench: ${result.notStarted} planned trial(s) not started; ${fix} the same command with --job-name ${jobName} to run only what is missing`,
  ];
}
