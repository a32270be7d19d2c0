// What the train side knows about one rollout folder before reading its model calls. Reading the
// folder, the outcome and the attempt facts are src/jobs-dir's (the same as loadJob's and resume's);
// this adds where the rollout sits below the user's path and keeps only the small part of
// result.json that rows and records need (convert holds one of these per rollout of a job).
import path from "node:path";
import {
  type JobInfo,
  type Replaced,
  type ResultState,
  type RolloutFolder,
  readRolloutFolder,
} from "../../jobs-dir/index.js";
import type { ScoreOutcome } from "../../schemas/outcome.js";
import { type RewardVector, rewardVectorOf } from "../signal/reward-vector.js";

export type { ResultState } from "../../jobs-dir/index.js";

export interface RolloutFacts {
  dir: string;
  /** The folder below the path the user gave (a stream record's rollout_path). */
  relPath: string;
  /** The folder as the user would write it: their path joined with relPath. */
  displayDir: string;
  name: string;
  /** Its job: the `job` group key and the `job` field of rows and records are its id. */
  job: JobInfo;
  /** What rows and records need of result.json. */
  result: ResultSummary | null;
  resultState: ResultState;
  /** Why a present file did not read as a result (cut short or not the result schema). */
  resultProblem: string | null;
  task: string;
  agent: string | null;
  model: string | null;
  taskDigest: string | null;
  /** A finite rewards.reward, else null (unscored: never 0). */
  reward: number | null;
  /** Every finite numeric key of result.json rewards (the task's keys, a multi-step task's steps), when scored. */
  rewards: Record<string, number> | null;
  /** --reward-vector: every finite number under rewards, nested keys flattened; null when unscored. */
  rewardVector: RewardVector | null;
  /** The error category a trainer masks on: agent side first, then verifier side. */
  error: string | null;
  /** Upstream's outcome: passed, failed, errored or verifier_errored; null without a readable result. */
  outcome: ScoreOutcome | null;
  /** Our outcome category (schemas/outcome.ts: timeout, provider_error, ...); null when it ended cleanly. */
  outcomeCategory: string | null;
  replaced: Replaced | null;
  attempt: number | null;
  /** A rollout_group member (`<group_id>-rNN`): its attempts are one trial. */
  member: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  mtimeMs: number;
  /** What was filled in for a result.json that lacks fields (upstream's), and from where; {} when none. */
  inferred: Record<string, string | null>;
  /** Fields of result.json of the wrong type, left out, and why. */
  ignored: Record<string, string>;
}

export interface ResultSummary {
  errorCategory: string | null;
  verifierErrorCategory: string | null;
  /** An error, a verifier error or a partial trajectory: without groups such a rollout gives no row. */
  endedWithError: boolean;
  scoreOutcome: ScoreOutcome;
  usage: Record<string, unknown> | undefined;
  replaces: string | null;
  policyVersion: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function summaryOf(f: RolloutFolder): ResultSummary | null {
  const r = f.result;
  if (!r) return null;
  const own = (r as Record<string, unknown>).policy_version;
  return {
    errorCategory: f.outcome.errorCategory,
    verifierErrorCategory: f.outcome.verifierErrorCategory,
    endedWithError: Boolean(
      r.error || r.verifier_error || r.error_category || r.verifier_error_category || r.partial_trajectory,
    ),
    scoreOutcome: f.outcome.scoreOutcome ?? "errored",
    usage: r.agent_result as Record<string, unknown> | undefined,
    replaces: str(r.replaces),
    policyVersion: typeof own === "string" || typeof own === "number" ? String(own) : null,
  };
}

/** The train side's facts of a rollout folder read by src/jobs-dir. */
export function factsOf(
  f: RolloutFolder,
  where: { job: JobInfo; root: string; displayRoot: string },
): RolloutFacts {
  const rel = path.relative(where.root, f.dir);
  return {
    dir: f.dir,
    relPath: rel.split(path.sep).join("/") || f.name,
    displayDir: rel ? path.join(where.displayRoot, rel) : where.displayRoot,
    name: f.name,
    job: where.job,
    result: summaryOf(f),
    resultState: f.resultState,
    resultProblem: f.resultProblem,
    task: f.task,
    agent: f.agent,
    model: f.model,
    taskDigest: f.taskDigest,
    reward: f.reward,
    rewards: f.reward === null ? null : numericRewards(f.result?.rewards),
    rewardVector: rewardVectorOf(f.result?.rewards, f.reward),
    error: f.outcome.maskCategory,
    outcome: f.outcome.scoreOutcome,
    outcomeCategory: f.outcome.outcome,
    replaced: f.replaced,
    attempt: f.attempt,
    member: f.member,
    startedAt: f.startedAt,
    finishedAt: f.finishedAt,
    mtimeMs: f.mtimeMs,
    inferred: f.inferred,
    ignored: f.ignored,
  };
}

/** The numeric keys of a rewards map; an upstream folder may carry other values, which are left out. */
function numericRewards(rewards: unknown): Record<string, number> | null {
  if (typeof rewards !== "object" || rewards === null) return null;
  const entries = Object.entries(rewards).filter(([, v]) => typeof v === "number" && Number.isFinite(v));
  return Object.fromEntries(entries) as Record<string, number>;
}

export async function readRollout(
  dir: string,
  where: { job: JobInfo; root: string; displayRoot: string },
): Promise<RolloutFacts> {
  // The train side reads upstream's folders too: a result.json that lacks fields is filled in.
  return factsOf(await readRolloutFolder(dir, { plan: where.job.plan, infer: true }), where);
}
