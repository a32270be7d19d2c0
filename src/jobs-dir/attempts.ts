// The one rule for which attempt stands for a trial. In a job folder of an evaluation, the rollouts
// of one (task, agent, model) are attempts of one trial; exactly one is final, the others count in
// no group. The final one is, in this order:
//   1. not replaced (a replaced.json marker says a retry or a resume replaced it);
//   2. scored (a finite reward) before unscored;
//   3. the higher attempt number (result.json `attempt`);
//   4. the later started_at;
//   5. the newer folder mtime (last: `cp -r` without -p rewrites it);
//   6. the folder name, so that the choice never depends on readdir order.
// Outside an evaluation (a bare folder of rollouts) every rollout is its own trial, except that the
// attempts upstream's rollout_group names `<task>__<group_id>-rNN-aK` are attempts of member NN
// wherever they sit, and the members of a group are separate trials even in an evaluation.
import type { Replaced } from "./rollout.js";

/** What the rule reads of an attempt; RolloutFolder and the train side's facts both carry it. */
export interface AttemptFacts {
  dir: string;
  name: string;
  task: string;
  agent: string | null;
  model: string | null;
  replaced: Replaced | null;
  reward: number | null;
  attempt: number | null;
  startedAt: string | null;
  mtimeMs: number;
  /** A rollout_group member (`<group_id>-rNN`) when the folder name says so: its attempts are one trial. */
  member?: string | null;
}

/** Negative when a was made before b: attempt number, then started_at, then mtime, then name. */
export function olderFirst(a: AttemptFacts, b: AttemptFacts): number {
  if (a.attempt !== null && b.attempt !== null && a.attempt !== b.attempt) return a.attempt - b.attempt;
  if (a.startedAt && b.startedAt && a.startedAt !== b.startedAt) return a.startedAt < b.startedAt ? -1 : 1;
  if (a.mtimeMs !== b.mtimeMs) return a.mtimeMs - b.mtimeMs;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Positive when a rather than b should be final (replaced markers aside). */
export function compareAttempts(a: AttemptFacts, b: AttemptFacts): number {
  const scored = Number(a.reward !== null) - Number(b.reward !== null);
  return scored !== 0 ? scored : olderFirst(a, b);
}

/** The final attempt among the attempts of one trial; null when every one was replaced. */
export function finalAttempt<T extends AttemptFacts>(attempts: readonly T[]): T | null {
  let best: T | null = null;
  for (const a of attempts) {
    if (a.replaced !== null) continue;
    if (best === null || compareAttempts(a, best) > 0) best = a;
  }
  return best;
}

/** The trial an attempt belongs to within its job folder. */
export function rolloutKeyOf(a: AttemptFacts): string {
  return JSON.stringify(a.member ? [a.task, a.agent, a.model, a.member] : [a.task, a.agent, a.model]);
}

/**
 * The rollouts of one job folder that are not final, by rollout dir: those with a marker (as the
 * marker says) and, in an evaluation, the other attempts of each trial (replaced by the final one).
 */
export function supersededIn(
  rollouts: readonly AttemptFacts[],
  isEvaluation: boolean,
): Map<string, Replaced> {
  const out = new Map<string, Replaced>();
  for (const r of rollouts) if (r.replaced) out.set(r.dir, r.replaced);
  const trials = new Map<string, AttemptFacts[]>();
  for (const r of rollouts) {
    if (!isEvaluation && !r.member) continue;
    const key = rolloutKeyOf(r);
    const list = trials.get(key);
    if (list) list.push(r);
    else trials.set(key, [r]);
  }
  for (const attempts of trials.values()) {
    const final = finalAttempt(attempts);
    for (const r of attempts)
      if (r !== final && !out.has(r.dir))
        out.set(r.dir, { replacedBy: final?.name ?? null, reason: "retried", at: null });
  }
  return out;
}
