// Attempts replaced by a retry are in no group (upstream's `excluded: "retried"`). A replaced.json
// marker says so; folders without markers follow upstream's rule: in an evaluation job folder, the
// rollouts of one (task, agent, model) are attempts of one trial, and the final one is the scored
// one first, then the newest.
import type { RolloutFacts } from "./rollout.js";

export interface Retried {
  replacedBy: string | null;
  reason: string;
}

function newer(a: RolloutFacts, b: RolloutFacts): number {
  if (a.attempt !== null && b.attempt !== null && a.attempt !== b.attempt) return a.attempt - b.attempt;
  if (a.startedAt && b.startedAt && a.startedAt !== b.startedAt) return a.startedAt < b.startedAt ? -1 : 1;
  return a.mtimeMs - b.mtimeMs;
}

/** Positive when a should be the final attempt rather than b. */
function rank(a: RolloutFacts, b: RolloutFacts): number {
  const scored = Number(a.reward !== null) - Number(b.reward !== null);
  return scored !== 0 ? scored : newer(a, b);
}

/** The replaced attempts among the rollouts of one job folder, by rollout dir. */
export function retriedIn(rollouts: readonly RolloutFacts[], isEvaluation: boolean): Map<string, Retried> {
  const out = new Map<string, Retried>();
  const rest: RolloutFacts[] = [];
  for (const r of rollouts) {
    if (r.replaced) out.set(r.dir, { replacedBy: r.replaced.replaced_by, reason: r.replaced.reason });
    else rest.push(r);
  }
  if (!isEvaluation) return out;
  const trials = new Map<string, RolloutFacts[]>();
  for (const r of rest) {
    const key = JSON.stringify([r.task, r.agent, r.model]);
    const list = trials.get(key);
    if (list) list.push(r);
    else trials.set(key, [r]);
  }
  for (const attempts of trials.values()) {
    if (attempts.length < 2) continue;
    const final = attempts.reduce((best, r) => (rank(r, best) > 0 ? r : best));
    for (const r of attempts) if (r !== final) out.set(r.dir, { replacedBy: final.name, reason: "retried" });
  }
  return out;
}
