// The read model: one rollout folder as every reader sees it (loadJob, resume, convert, stream,
// validate, results, the viewer). Its folder and job, what ran (the facts a group is keyed on),
// its attempt chain, how it ended, and, once a reader needs them, its model calls. A missing or
// cut-short result still belongs to its rollout: its facts come from the job's plan, else from
// config.json, else from the folder name.
//
// The record is small (a few hundred bytes): the viewer keeps 10,000 of them. What is not here is
// read from the folder when asked for (readResult, readRolloutExchanges or withCalls, readRolloutConfig).
import { promises as fs } from "node:fs";
import path from "node:path";
import { samplingKey, samplingOf } from "../schemas/group-identity.js";
import type { AgentResult, RolloutExecutor, RolloutResult } from "../schemas/result.js";
import { type CallFacts, callFactsOf } from "./calls.js";
import { type Exchange, readExchanges } from "./exchange.js";
import { type Inferred, inferResult } from "./infer.js";
import type { Job } from "./job.js";
import type { PlanFacts } from "./job-files.js";
import { CONFIG, groupAttemptOf, TRAJECTORY, taskOfRolloutName } from "./layout.js";
import { attributedReward, type Outcome, outcomeOfResult } from "./outcome.js";
import {
  type Replaced,
  type ResultRead,
  type ResultState,
  readObject,
  readReplaced,
  readResultFile,
} from "./result-file.js";

export interface Rollout {
  /** The folder's name: `<task>__<8 hex>` as bench run and upstream write it. */
  name: string;
  /** The rollout folder, absolute. */
  dir: string;
  /** The folder below the path the reader was given, `/`-separated (a stream record's rollout_path). */
  relPath: string;
  /** The folder as the user would write it: the path they gave, joined with relPath. */
  displayDir: string;
  job: Job;

  /** What ran: the facts a group is keyed on. */
  task: string;
  agent: string | null;
  model: string | null;
  taskDigest: string | null;
  /** The policy version result.json records (bench run --policy-version), else null. */
  policyVersion: string | null;
  /**
   * The result records the run's policy version in its group identity (null there: the run stamped
   * none): the version is that, not what the calls name.
   */
  policyVersionStamped: boolean;
  /**
   * The run it belongs to: the name its repeat jobs share, as recorded (group_identity, the plan, an
   * older result's job_name), else the job of a trial-NN folder; null when nothing says (a job of
   * upstream's without repeats): readers then let its job stand for its run, as upstream groups.
   */
  run: string | null;
  /** The run's sampling as the `sampling` group key (samplingKey), null when nothing records it. */
  sampling: string | null;

  /** The attempt number the writer recorded (1 for the first), else the folder name's `-aK`. */
  attempt: number | null;
  /** A rollout_group member (`<group_id>-rNN`) when the folder name says so: its attempts are one rollout. */
  member: string | null;
  /** The attempt this one replaced (result.json `replaces`). */
  replaces: string | null;
  /**
   * Set when this attempt is not final: a replaced.json beside it, or (once the job's attempts were
   * read together, settleAttempts) a later or better attempt of the same rollout. Counts in no group.
   */
  replaced: Replaced | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** The folder's mtime: the last tie-break of the attempt rule (a copy can change it). */
  mtimeMs: number;

  resultState: ResultState;
  /** Why a present file did not read as a result (cut short, or a field of the wrong type). */
  resultProblem: string | null;
  /** The verifier's reward, 0 when scored without one (attribution score), null when masked: never a silent 0. */
  reward: number | null;
  /** result.json `rewards` as written: the scalar and the task's own keys (null when unscored). */
  rewards: RolloutResult["rewards"];
  outcome: Outcome;
  /** The agent's trajectory was cut short (result.json partial_trajectory). */
  partialTrajectory: boolean;
  /** result.json agent_result: tokens, cost, calls. */
  usage: AgentResult | null;
  /** Where it ran when not here (--executor slurm: its node and SLURM job). */
  executor: RolloutExecutor | null;
  /** What its model calls say, once a reader read them (withCalls); null before. */
  calls: CallFacts | null;

  /** Read with `infer`: what was filled in for a result.json that lacks fields, and from where. */
  inferred: Inferred;
  /** Read with `infer`: fields of the wrong type that were left out, and why. */
  ignored: Record<string, string>;
}

/** Where a rollout folder is read from. */
export interface ReadContext {
  job: Job;
  /** The folder the reader was given, absolute, and as the user wrote it. */
  root: string;
  displayRoot: string;
  /**
   * Fill in what a result.json written by upstream leaves out (infer.ts) and say what came from
   * where; without it (loadJob, resume) a result that lacks a field we write reads as cut short.
   */
  infer?: boolean;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const NOTHING: Readonly<Record<string, never>> = Object.freeze({});

/** The result, filled in from the folder's other files when the reader infers. */
async function resultOf(dir: string, read: ResultRead, plan: PlanFacts | null, infer: boolean) {
  let { state, result, problem } = read;
  // config.json is read only when the strict read failed: a whole result names its agent and model.
  const config = result ? null : await readObject(path.join(dir, CONFIG));
  let inferred: Inferred = NOTHING;
  let ignored: Record<string, string> = NOTHING;
  if (infer && read.raw) {
    const filled = inferResult(read.raw, { name: path.basename(dir), config, plan });
    if ("problem" in filled) problem = filled.problem;
    else {
      ({ result, inferred, ignored } = filled);
      if (state === "truncated" && problem?.startsWith("not valid JSON"))
        ignored = { ...ignored, "(file)": "NaN or Infinity (Python's json.dumps) read as null" };
      state = "present";
      problem = null;
    }
  }
  return { state, result, problem, config, inferred, ignored };
}

function policyVersionOf(
  result: RolloutResult | null,
  identity: Record<string, unknown> | null,
): string | null {
  if (identity && "policy_version" in identity) return str(identity.policy_version);
  const own = (result as Record<string, unknown> | null)?.policy_version;
  return typeof own === "string" || typeof own === "number" ? String(own) : null;
}

const record = (v: unknown): Record<string, unknown> | null =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** The run, by the first source that says: see Rollout.run. */
function runOf(
  result: RolloutResult | null,
  identity: Record<string, unknown> | null,
  job: Job,
): string | null {
  const own = result as Record<string, unknown> | null;
  // Our results name their run twice over (job_name beside trial); upstream's name neither.
  const ours = str(own?.trial) !== null ? str(own?.job_name) : null;
  return str(identity?.run) ?? ours ?? job.plan?.jobName ?? (job.repeat !== null ? job.name : null);
}

function samplingKeyOf(identity: Record<string, unknown> | null, plan: PlanFacts | null): string | null {
  const sampling = samplingOf(identity?.sampling) ?? plan?.sampling ?? null;
  return sampling ? samplingKey(sampling) : null;
}

export async function readRollout(dir: string, ctx: ReadContext): Promise<Rollout> {
  const [read, replaced, stat] = await Promise.all([
    readResultFile(dir, ctx.infer),
    readReplaced(dir),
    fs.stat(dir).catch(() => null),
  ]);
  const name = path.basename(dir);
  const plan = ctx.job.plan;
  const { state, result, problem, config, inferred, ignored } = await resultOf(
    dir,
    read,
    plan,
    ctx.infer === true,
  );
  const groupAttempt = groupAttemptOf(name);
  const outcome = outcomeOfResult(result);
  const task = str(result?.task_name) ?? taskOfRolloutName(name);
  const identity = record((result as Record<string, unknown> | null)?.group_identity);
  const rel = path.relative(ctx.root, dir);
  return {
    name,
    dir,
    relPath: rel.split(path.sep).join("/") || name,
    displayDir: rel ? path.join(ctx.displayRoot, rel) : ctx.displayRoot,
    job: ctx.job,
    task,
    agent: str(result?.agent) ?? str(plan?.agent) ?? str(config?.agent),
    model: result ? (result.model ?? null) : (str(plan?.model) ?? str(config?.model)),
    taskDigest:
      str(result?.task_digest) ??
      str(plan?.tasks?.find((t) => t.name === task)?.digest) ??
      str(config?.task_digest),
    policyVersion: policyVersionOf(result, identity),
    policyVersionStamped: identity !== null && "policy_version" in identity,
    run: runOf(result, identity, ctx.job),
    sampling: samplingKeyOf(identity, plan),
    attempt: typeof result?.attempt === "number" ? result.attempt : (groupAttempt?.attempt ?? null),
    member: groupAttempt?.member ?? null,
    replaces: str(result?.replaces),
    replaced,
    startedAt: str(result?.started_at),
    finishedAt: str(result?.finished_at),
    mtimeMs: stat?.mtimeMs ?? 0,
    resultState: state,
    resultProblem: problem,
    reward: attributedReward(result, outcome),
    rewards: result?.rewards ?? null,
    outcome,
    partialTrajectory: result?.partial_trajectory === true,
    usage: result?.agent_result ?? null,
    executor: result?.executor ?? null,
    calls: null,
    inferred,
    ignored,
  };
}

/** An error, a verifier error or a partial trajectory: without groups such a rollout gives no row. */
export function endedWithError(r: Rollout): boolean {
  return r.outcome.maskCategory !== null || r.partialTrajectory;
}

/** A row's, a stream record's and a manifest member's attribution: score or mask, and why. */
export function attributionField(r: Pick<Rollout, "outcome">): {
  attribution: Outcome["attribution"];
  attribution_reason: Outcome["attributionReason"];
} {
  return { attribution: r.outcome.attribution, attribution_reason: r.outcome.attributionReason };
}

/** The numeric keys of rewards when scored (the task's keys, a multi-step task's steps); upstream's may carry others. */
export function numericRewards(r: Pick<Rollout, "reward" | "rewards">): Record<string, number> | null {
  if (r.reward === null || !r.rewards) return null;
  const entries = Object.entries(r.rewards).filter(([, v]) => typeof v === "number" && Number.isFinite(v));
  return Object.fromEntries(entries) as Record<string, number>;
}

/** The `rewards` of a row, a stream record or a manifest member: numeric keys when scored, else absent. */
export function rewardsField(r: Pick<Rollout, "reward" | "rewards">): { rewards?: Record<string, number> } {
  const rewards = numericRewards(r);
  return rewards ? { rewards } : {};
}

/** The rollout's calls read and parsed; a line that does not parse throws (DataError). */
export function readRolloutExchanges(
  r: Pick<Rollout, "dir" | "displayDir">,
): Promise<Exchange[] | undefined> {
  return readExchanges(path.join(r.dir, TRAJECTORY), path.join(r.displayDir, TRAJECTORY));
}

/** The rollout with its call facts; a broken file is a fact (`problem`), not a failure. */
export async function withCalls(r: Rollout): Promise<Rollout> {
  try {
    return { ...r, calls: callFactsOf(await readRolloutExchanges(r)) };
  } catch (err) {
    return { ...r, calls: { ...callFactsOf(undefined), recorded: true, problem: (err as Error).message } };
  }
}
