// What a job folder already holds, for resume: for each task, its attempts, which one is final,
// and whether that one still needs running (missing result, cut short, or interrupted). The reading
// and the final-attempt rule are src/jobs-dir's, the same as loadJob's and bench train's.
import { randomBytes } from "node:crypto";
import path from "node:path";
import {
  type AttemptFacts,
  finalAttempt as finalOf,
  olderFirst,
  REPLACED,
  type RolloutFolder,
  readRolloutFolder,
  rewardOf,
  rolloutDirsIn,
  rolloutNameFor,
} from "../jobs-dir/index.js";
import { isRetryable } from "../schemas/outcome.js";
import type { ReplacedMarker, RolloutResult } from "../schemas/result.js";
import { writeJsonAtomic } from "../util/fs.js";

export type AttemptState = "finished" | "missing_result" | "truncated_result";

export interface Attempt {
  dir: string;
  name: string;
  task: string;
  state: AttemptState;
  result: RolloutResult | null;
  replaced: ReplacedMarker | null;
  mtimeMs: number;
}

const STATE: Record<RolloutFolder["resultState"], AttemptState> = {
  present: "finished",
  missing: "missing_result",
  truncated: "truncated_result",
};

export function attemptOf(r: RolloutFolder): Attempt {
  const replaced: ReplacedMarker | null = r.replaced
    ? {
        replaced_by: r.replaced.replacedBy ?? "?",
        reason: r.replaced.reason as ReplacedMarker["reason"],
        at: r.replaced.at ?? "",
      }
    : null;
  return {
    dir: r.dir,
    name: r.name,
    task: r.task,
    state: STATE[r.resultState],
    result: r.result,
    replaced,
    mtimeMs: r.mtimeMs,
  };
}

async function readAttempt(dir: string): Promise<Attempt> {
  return attemptOf(await readRolloutFolder(dir));
}

/** Every rollout folder of a job, grouped by task, oldest attempt first. */
export async function scanAttempts(jobDir: string): Promise<Map<string, Attempt[]>> {
  const byTask = new Map<string, Attempt[]>();
  for (const a of await Promise.all((await rolloutDirsIn(jobDir)).map(readAttempt))) {
    const list = byTask.get(a.task) ?? [];
    list.push(a);
    byTask.set(a.task, list);
  }
  for (const list of byTask.values()) list.sort((x, y) => olderFirst(factsOf(x), factsOf(y)));
  return byTask;
}

/** What the jobs-dir attempt rule reads, from an Attempt (a job folder holds one agent and model). */
function factsOf(a: Attempt): AttemptFacts {
  return {
    dir: a.dir,
    name: a.name,
    task: a.task,
    agent: null,
    model: null,
    replaced: a.replaced
      ? { replacedBy: a.replaced.replaced_by, reason: a.replaced.reason, at: a.replaced.at }
      : null,
    reward: rewardOf(a.result),
    attempt: typeof a.result?.attempt === "number" ? a.result.attempt : null,
    startedAt: a.result?.started_at || null,
    mtimeMs: a.mtimeMs,
  };
}

/** The attempt that stands for the task, by the one rule in src/jobs-dir/attempts.ts. */
export function finalAttempt(attempts: Attempt[]): Attempt | null {
  const facts = attempts.map(factsOf);
  const final = finalOf(facts);
  return final === null ? null : (attempts[facts.indexOf(final)] ?? null);
}

/**
 * Whether resume runs the task again: nothing finished, or what finished was cut short by an
 * interrupt or ended in an infrastructure failure that can pass (the endpoint that was down when the
 * run stopped, a sandbox that did not start). Scored rollouts and the policy's, the task's and the
 * user's failures stand.
 */
export function needsRun(final: Attempt | null): boolean {
  if (final === null || final.state !== "finished") return true;
  const category = final.result?.error_category;
  return category === "interrupted" || isRetryable(category);
}

export async function markReplaced(
  attempt: Attempt,
  by: string,
  reason: ReplacedMarker["reason"],
): Promise<void> {
  const marker: ReplacedMarker = { replaced_by: by, reason, at: new Date().toISOString() };
  await writeJsonAtomic(path.join(attempt.dir, REPLACED), marker, { durable: true });
}

export function newRolloutName(task: string): string {
  return rolloutNameFor(task, randomBytes(4).toString("hex"));
}
