// What the viewer derives from a Rollout for its tables: where it stands in the outcome table's
// owners, its tokens and cost, how long it took. Nothing is kept beside the record: a folder of
// 10,000 rollouts is 10,000 records (run-index.ts), a few hundred bytes each.
import type { Rollout } from "../../jobs-dir/index.js";
import { type OutcomeCategory, ownerOf } from "../../schemas/outcome.js";

/** One bucket per rollout, in the outcome table's owners (schemas/outcome.ts). */
export type Category = "scored" | "policy_failure" | "infrastructure_failure" | "task_failure" | "withheld";
export const CATEGORIES: readonly Category[] = [
  "scored",
  "policy_failure",
  "infrastructure_failure",
  "task_failure",
  "withheld",
];

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function ownerOrUndefined(category: string) {
  try {
    return ownerOf(category as OutcomeCategory);
  } catch {
    return undefined;
  }
}

export function categoryOf(r: Pick<Rollout, "outcome" | "resultState" | "reward">): Category {
  const c = r.outcome.category;
  const owner = c ? ownerOrUndefined(c) : undefined;
  if (owner === "policy") return "policy_failure";
  if (owner === "infrastructure") return "infrastructure_failure";
  if (owner === "task" || owner === "user") return "task_failure";
  if (r.resultState !== "present" || r.reward === null) return "withheld";
  return "scored";
}

export function durationSecOf(r: Pick<Rollout, "startedAt" | "finishedAt">): number | null {
  if (!r.startedAt || !r.finishedAt) return null;
  const d = (Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000;
  return Number.isFinite(d) && d >= 0 ? d : null;
}

/** Tokens and cost from result.json agent_result (the gateway's count); null where it says nothing. */
export function usageOf(r: Pick<Rollout, "usage">): {
  input: number | null;
  output: number | null;
  total: number | null;
  costUsd: number | null;
} {
  const u = r.usage ?? {};
  return {
    input: num(u.n_input_tokens),
    output: num(u.n_output_tokens),
    total: num(u.total_tokens),
    costUsd: num(u.cost_usd),
  };
}

// The same few values (agent, model, task, job) repeat across thousands of rollouts: one copy each.
const pool = new Map<string, string>();
function intern<T extends string | null>(s: T): T {
  if (s === null) return s;
  const hit = pool.get(s);
  if (hit !== undefined) return hit as T;
  if (pool.size < 100_000) pool.set(s, s);
  return s;
}

/** The record as the viewer keeps it: its repeated strings shared with every other record's. */
export function compact(r: Rollout): Rollout {
  return {
    ...r,
    task: intern(r.task),
    agent: intern(r.agent),
    model: intern(r.model),
    taskDigest: intern(r.taskDigest),
    policyVersion: intern(r.policyVersion),
  };
}
