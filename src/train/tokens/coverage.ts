// `bench train token-coverage`: for each rollout of a job (or a folder of jobs), whether its model
// calls carry captured token ids and logprobs, and whether it is training-grade (its calls merge into
// one token sequence per conversation). The per-rollout facts are tokenReport's, as the stream
// record's `token_capture` block gives them; this adds the rollout's name and the totals.
import path from "node:path";
import { readExchanges, trainingCalls } from "../../jobs-dir/exchange.js";
import { scanJobs, TRAJECTORY } from "../../jobs-dir/index.js";
import type { TokenCaptureSummary } from "../../schemas/rollout-stream.js";
import { tokenReport } from "./tokens.js";

export interface RolloutCoverage extends TokenCaptureSummary {
  rollout: string;
  rollout_dir: string;
  job: string;
  /** Calls another process in the sandbox made (metadata.origin "other"): never training data, not in `calls`. */
  non_agent_calls: number;
}

export interface TokenCoverage {
  rollouts: number;
  training_grade_rollouts: number;
  /** Rollouts with at least one call carrying a token_capture block. */
  captured_rollouts: number;
  calls: number;
  captured_calls: number;
  complete_calls: number;
  /** Calls other processes than the agent made, over all rollouts (left out of the counts above). */
  non_agent_calls: number;
  /** Attempts replaced by a retry: not final, so not reported. */
  retried_left_out: number;
  per_rollout: RolloutCoverage[];
}

export async function tokenCoverage(input: string): Promise<TokenCoverage> {
  const scan = await scanJobs(input);
  const out: TokenCoverage = {
    rollouts: 0,
    training_grade_rollouts: 0,
    captured_rollouts: 0,
    calls: 0,
    captured_calls: 0,
    complete_calls: 0,
    non_agent_calls: 0,
    retried_left_out: 0,
    per_rollout: [],
  };
  for await (const j of scan.eachJob()) {
    for (const r of j.rollouts) {
      if (r.replaced) {
        out.retried_left_out++;
        continue;
      }
      const file = path.join(r.dir, TRAJECTORY);
      const display = path.join(r.displayDir, TRAJECTORY);
      // A rollout still running may have its last call cut short; a finished one's calls must parse.
      const exchanges =
        r.resultState === "present"
          ? await readExchanges(file, display)
          : await readExchanges(file, display).catch(() => undefined);
      const own = exchanges && trainingCalls(exchanges);
      const { summary } = tokenReport(own?.calls);
      const nonAgent = own?.nonAgent ?? 0;
      out.non_agent_calls += nonAgent;
      out.rollouts++;
      if (summary.training_grade) out.training_grade_rollouts++;
      if (summary.captured_calls > 0) out.captured_rollouts++;
      out.calls += summary.calls;
      out.captured_calls += summary.captured_calls;
      out.complete_calls += summary.complete_calls;
      out.per_rollout.push({
        rollout: r.name,
        rollout_dir: r.displayDir,
        job: r.job.id,
        ...summary,
        non_agent_calls: nonAgent,
      });
    }
  }
  return out;
}

/** One line a rollout, for people. */
export function coverageLine(r: RolloutCoverage): string {
  const grade = r.training_grade ? "training-grade" : "not training-grade";
  const why = r.reason ? ` (${r.reason})` : "";
  return (
    `${r.rollout_dir}: ${r.status}, ${grade}; ${r.captured_calls}/${r.calls} call(s) captured, ` +
    `${r.complete_calls} complete${why}${r.non_agent_calls > 0 ? `; ${r.non_agent_calls} call(s) by other processes left out` : ""}`
  );
}

export function coverageTotal(c: TokenCoverage): string {
  const retried = c.retried_left_out > 0 ? `; ${c.retried_left_out} replaced attempt(s) left out` : "";
  const others =
    c.non_agent_calls > 0 ? `; ${c.non_agent_calls} call(s) by other processes than the agent left out` : "";
  return (
    `${c.training_grade_rollouts} of ${c.rollouts} rollout(s) training-grade, ${c.captured_rollouts} with captured ` +
    `tokens; ${c.captured_calls} of ${c.calls} call(s) captured, ${c.complete_calls} complete${retried}${others}`
  );
}
