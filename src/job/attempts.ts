// What a job folder already holds, for resume: for each task, its attempts, which one is final,
// and whether that one still needs running (missing result, cut short, or interrupted). The reading
// and the final-attempt rule are src/jobs-dir's, the same as loadJob's and bench train's.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { olderFirst, REPLACED, type Rollout, rolloutNameFor, scanFound } from "../jobs-dir/index.js";
import { isRetryable } from "../schemas/outcome.js";
import type { ReplacedMarker } from "../schemas/result.js";
import { writeJsonAtomic } from "../util/fs.js";

export { finalAttempt } from "../jobs-dir/index.js";

/** Every rollout folder of a job, grouped by task, oldest attempt first. */
export async function scanAttempts(jobDir: string): Promise<Map<string, Rollout[]>> {
  const byTask = new Map<string, Rollout[]>();
  const scan = await scanFound(jobDir, jobDir, { infer: false });
  for await (const { job, rollouts } of scan.eachJob()) {
    if (job.dir !== jobDir) continue;
    for (const r of rollouts) {
      const list = byTask.get(r.task) ?? [];
      list.push(r);
      byTask.set(r.task, list);
    }
  }
  for (const list of byTask.values()) list.sort(olderFirst);
  return byTask;
}

/**
 * Whether resume runs the task again: nothing finished, or what finished was cut short by an
 * interrupt, ended in an infrastructure failure that can pass (the endpoint that was down when the
 * run stopped, a sandbox that did not start), or in a configuration error (a wrong key or URL: the
 * run says to fix it and rerun with the job's name, and the rerun must complete the group). Scored
 * rollouts and the policy's and the task's failures stand.
 */
export function needsRun(final: Rollout | null): boolean {
  if (final === null || final.resultState !== "present") return true;
  const category = final.outcome.errorCategory;
  return (
    category === "interrupted" ||
    category === "config_error" ||
    isRetryable(category, final.outcome.attribution)
  );
}

/** Marks an attempt's folder as replaced by the rollout named `by`: it counts in no group. */
export async function markReplaced(dir: string, by: string, reason: ReplacedMarker["reason"]): Promise<void> {
  const marker: ReplacedMarker = { replaced_by: by, reason, at: new Date().toISOString() };
  await writeJsonAtomic(path.join(dir, REPLACED), marker, { durable: true });
}

export function newRolloutName(task: string): string {
  return rolloutNameFor(task, randomBytes(4).toString("hex"));
}
