// The one rule for which attempt stands for a rollout. In a job folder of an evaluation, the
// rollout folders of one (task, agent, model) are attempts of one rollout; exactly one is final,
// the others count in no group. The final one is, in this order:
//   1. not replaced (a replaced.json marker says a retry or a resume replaced it);
//   2. scored (a finite reward) before unscored;
//   3. the higher attempt number (result.json `attempt`);
//   4. the later started_at;
//   5. the newer folder mtime (last: `cp -r` without -p rewrites it);
//   6. the folder name, so that the choice never depends on readdir order.
// Outside an evaluation (a bare folder of rollouts) every folder is its own rollout, except that the
// attempts upstream's rollout_group names `<task>__<group_id>-rNN-aK` are attempts of member NN
// wherever they sit, and the members of a group are separate rollouts even in an evaluation.
import type { Replaced } from "./result-file.js";
import type { Rollout } from "./rollout.js";

/** What the rule reads of an attempt. */
export type AttemptFields = Pick<
  Rollout,
  "dir" | "name" | "task" | "agent" | "model" | "replaced" | "reward" | "attempt" | "startedAt" | "mtimeMs"
> &
  Partial<Pick<Rollout, "member">>;

/** Negative when a was made before b: attempt number, then started_at, then mtime, then name. */
export function olderFirst(a: AttemptFields, b: AttemptFields): number {
  if (a.attempt !== null && b.attempt !== null && a.attempt !== b.attempt) return a.attempt - b.attempt;
  if (a.startedAt && b.startedAt && a.startedAt !== b.startedAt) return a.startedAt < b.startedAt ? -1 : 1;
  if (a.mtimeMs !== b.mtimeMs) return a.mtimeMs - b.mtimeMs;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Positive when a rather than b should be final (replaced markers aside). */
export function compareAttempts(a: AttemptFields, b: AttemptFields): number {
  const scored = Number(a.reward !== null) - Number(b.reward !== null);
  return scored !== 0 ? scored : olderFirst(a, b);
}

/** The final attempt among the attempts of one rollout; null when a marker replaced every one. */
export function finalAttempt<T extends AttemptFields>(attempts: readonly T[]): T | null {
  let best: T | null = null;
  for (const a of attempts) {
    if (a.replaced?.marker) continue;
    if (best === null || compareAttempts(a, best) > 0) best = a;
  }
  return best;
}

/** The rollout an attempt belongs to within its job folder. */
export function rolloutKeyOf(a: AttemptFields): string {
  return JSON.stringify(a.member ? [a.task, a.agent, a.model, a.member] : [a.task, a.agent, a.model]);
}

/**
 * The attempts of one job folder that are not final, by folder: those with a marker (as the marker
 * says) and, in an evaluation, the other attempts of each rollout (replaced by the final one).
 */
export function replacedIn(rollouts: readonly AttemptFields[], isEvaluation: boolean): Map<string, Replaced> {
  const out = new Map<string, Replaced>();
  for (const r of rollouts) if (r.replaced?.marker) out.set(r.dir, r.replaced);
  const attemptsOf = new Map<string, AttemptFields[]>();
  for (const r of rollouts) {
    if (!isEvaluation && !r.member) continue;
    const key = rolloutKeyOf(r);
    const list = attemptsOf.get(key);
    if (list) list.push(r);
    else attemptsOf.set(key, [r]);
  }
  for (const attempts of attemptsOf.values()) {
    const final = finalAttempt(attempts);
    for (const r of attempts)
      if (r !== final && !out.has(r.dir))
        out.set(r.dir, { replacedBy: final?.name ?? null, reason: "retried", at: null, marker: false });
  }
  return out;
}

/** The job's rollouts with `replaced` set on every attempt that is not final (read together, in one job). */
export function settleAttempts(rollouts: readonly Rollout[], isEvaluation: boolean): Rollout[] {
  const superseded = replacedIn(rollouts, isEvaluation);
  return rollouts.map((r) => {
    // A record settled before keeps its marker; what the rule said then is decided again now.
    const replaced = superseded.get(r.dir) ?? (r.replaced?.marker ? r.replaced : null);
    return replaced === r.replaced ? r : { ...r, replaced };
  });
}
