// The compact summary the viewer keeps of each rollout: what the runs, groups and results tables
// need, a few hundred bytes a rollout, so a folder of 10,000 rollouts stays small in memory. The
// detail (trajectory, calls, verifier output) is read from the folder when a page asks for it.
import path from "node:path";
import type { Replaced } from "../../jobs-dir/index.js";
import { isSuccessful, policyVersions, readExchanges, repeatOf, TRAJECTORY } from "../../jobs-dir/index.js";
import { type OutcomeCategory, ownerOf, type ScoreOutcome } from "../../schemas/outcome.js";
import { policyVersionKey } from "../../train/groups/groups.js";
import type { RolloutFacts } from "../../train/rollouts/facts.js";

/** One bucket per rollout, in the outcome table's owners (schemas/outcome.ts). */
export type Category = "scored" | "policy_failure" | "infrastructure_failure" | "task_failure" | "withheld";
export const CATEGORIES: readonly Category[] = [
  "scored",
  "policy_failure",
  "infrastructure_failure",
  "task_failure",
  "withheld",
];

export interface RolloutSummary {
  /** The rollout folder below JOBS_DIR, `/`-separated: its id in URLs. */
  path: string;
  dir: string;
  name: string;
  /** Its job's id (the `job` group key) and the job folder below JOBS_DIR. */
  job: string;
  jobPath: string;
  trial: string | null;
  task: string;
  agent: string | null;
  model: string | null;
  taskDigest: string | null;
  resultState: "present" | "missing" | "truncated";
  resultProblem: string | null;
  reward: number | null;
  rewards: Record<string, number> | null;
  outcome: ScoreOutcome | null;
  outcomeCategory: string | null;
  error: string | null;
  category: Category;
  replaced: Replaced | null;
  attempt: number | null;
  member: string | null;
  mtimeMs: number;
  /** The policy_version group key: result.json's, else the versions its calls name. */
  policyVersion: string | null;
  /** Model calls in llm_trajectory.jsonl and how many succeeded; null when the file is absent. */
  calls: number | null;
  okCalls: number | null;
  /** A broken llm_trajectory.jsonl (a line cut short while a run writes it). */
  callsProblem: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  costUsd: number | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationSec: number | null;
}

// The same few values (agent, model, task, job, outcome) repeat across thousands of rollouts: one copy each.
const pool = new Map<string, string>();
function intern<T extends string | null>(s: T): T {
  if (s === null) return s;
  const hit = pool.get(s);
  if (hit !== undefined) return hit as T;
  if (pool.size < 100_000) pool.set(s, s);
  return s;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function categoryOf(f: Pick<RolloutFacts, "outcomeCategory" | "resultState" | "reward">): Category {
  const c = f.outcomeCategory;
  if (c) {
    const owner = (() => {
      try {
        return ownerOf(c as OutcomeCategory);
      } catch {
        return undefined;
      }
    })();
    if (owner === "policy") return "policy_failure";
    if (owner === "infrastructure") return "infrastructure_failure";
    if (owner === "task" || owner === "user") return "task_failure";
  }
  if (f.resultState !== "present" || f.reward === null) return "withheld";
  return "scored";
}

function secondsBetween(a: string | null, b: string | null): number | null {
  if (!a || !b) return null;
  const d = (Date.parse(b) - Date.parse(a)) / 1000;
  return Number.isFinite(d) && d >= 0 ? d : null;
}

/** The facts train reads of a rollout, plus its model-call counts (the seed's withheld rules need them). */
export async function summaryOf(f: RolloutFacts, root: string): Promise<RolloutSummary> {
  let calls: number | null = null;
  let okCalls: number | null = null;
  let callsProblem: string | null = null;
  let versions: string[] = [];
  try {
    const ex = await readExchanges(path.join(f.dir, TRAJECTORY), path.join(f.relPath, TRAJECTORY));
    if (ex) {
      calls = ex.length;
      okCalls = ex.filter(isSuccessful).length;
      versions = policyVersions(ex);
    }
  } catch (err) {
    callsProblem = (err as Error).message;
  }
  const usage = (f.result?.usage ?? {}) as Record<string, unknown>;
  const jobRel = path.relative(root, f.job.dir).split(path.sep).join("/");
  return {
    path: f.relPath,
    dir: f.dir,
    name: f.name,
    job: intern(f.job.id),
    jobPath: intern(jobRel || "."),
    trial: intern(repeatOf(f.job.dir)),
    task: intern(f.task),
    agent: intern(f.agent),
    model: intern(f.model),
    taskDigest: intern(f.taskDigest),
    resultState: f.resultState,
    resultProblem: f.resultProblem,
    reward: f.reward,
    rewards: f.rewards,
    outcome: intern(f.outcome),
    outcomeCategory: intern(f.outcomeCategory),
    error: intern(f.error),
    category: categoryOf(f),
    replaced: f.replaced,
    attempt: f.attempt,
    member: f.member,
    mtimeMs: f.mtimeMs,
    policyVersion: intern(policyVersionKey(f, versions)),
    calls,
    okCalls,
    callsProblem,
    inputTokens: num(usage.n_input_tokens),
    outputTokens: num(usage.n_output_tokens),
    totalTokens: num(usage.total_tokens),
    costUsd: num(usage.cost_usd),
    startedAt: f.startedAt,
    finishedAt: f.finishedAt,
    durationSec: secondsBetween(f.startedAt, f.finishedAt),
  };
}
