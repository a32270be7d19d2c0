// Reading jobs back: a job folder, or a folder of jobs (such as <jobs-dir>/<agent> with its
// trial-NN jobs). Replaced attempts are left out unless asked for; a trial whose result.json is
// missing or cut short is still listed, because it still belongs to its group. Which attempt is
// final and what each rollout's outcome is come from src/jobs-dir, as for resume and bench train.
import path from "node:path";
import { UserInputError } from "../errors.js";
import { type JobFolder, type RolloutFolder, readJobs } from "../jobs-dir/index.js";
import { checkOptionKeys } from "../options.js";
import { AGENT_ERROR_CATEGORIES, type ScoreOutcome, VERIFIER_ERROR_CATEGORIES } from "../schemas/outcome.js";
import type { RolloutResult } from "../schemas/result.js";
import { type AttemptState, attemptOf } from "./attempts.js";

export interface LoadedTrial {
  taskName: string;
  rolloutName: string;
  /** Absolute path of the rollout folder. */
  path: string;
  jobName: string;
  jobDir: string;
  /** "trial-01" when the job sits in a trial-NN folder. */
  trial: string | null;
  status: AttemptState;
  /** null: unscored (never read it as 0). */
  reward: number | null;
  rewards: RolloutResult["rewards"];
  outcome: string | null;
  scoreOutcome: ScoreOutcome;
  /** error_category, or agent_error when the result names an error but no category. */
  errorCategory: string | null;
  /** verifier_error_category, or verifier_failure when the result names a verifier error but no category. */
  verifierErrorCategory: string | null;
  error: string | null;
  verifierError: string | null;
  attempt: number;
  replaced: boolean;
  result: RolloutResult | null;
}

/** Final attempts only (what summary.json counts), plus the trials the run never started. */
export interface JobCounts {
  trials: number;
  scored: number;
  /** Final attempts with a result and no outcome category: they ended cleanly. */
  clean: number;
  /** Final attempts whose result.json is missing or cut short. */
  noResult: number;
  /** Final attempts per outcome category; every category of src/schemas/outcome.ts is present. */
  outcomes: Record<string, number>;
  /** Summed from each job's summary.json `not_started`. */
  notStarted: number;
}

export interface LoadedJob {
  jobDirs: string[];
  trials: LoadedTrial[];
  counts: JobCounts;
  /** The jobs whose run stopped starting trials (summary.json `stopped`), with why. */
  stopped: Array<{ jobDir: string; reason: string; message: string }>;
}

function toTrial(r: RolloutFolder, job: JobFolder, replaced: boolean): LoadedTrial {
  const res = r.result;
  const o = r.outcome;
  return {
    taskName: r.task,
    rolloutName: r.name,
    path: r.dir,
    jobName: path.basename(job.dir),
    jobDir: job.dir,
    trial: job.trial,
    status: attemptOf(r).state,
    reward: o.reward,
    rewards: res?.rewards ?? null,
    outcome: o.outcome,
    // No readable result: the run died mid-trial, which summary.json counts as errored.
    scoreOutcome: o.scoreOutcome ?? "errored",
    errorCategory: o.errorCategory,
    verifierErrorCategory: o.verifierErrorCategory,
    error: res?.error ?? null,
    verifierError: res?.verifier_error ?? null,
    attempt: r.attempt ?? 1,
    replaced,
    result: res,
  };
}

function emptyCounts(): JobCounts {
  const outcomes: Record<string, number> = {};
  for (const c of [...AGENT_ERROR_CATEGORIES, ...VERIFIER_ERROR_CATEGORIES]) outcomes[c] = 0;
  return { trials: 0, scored: 0, clean: 0, noResult: 0, outcomes, notStarted: 0 };
}

function count(counts: JobCounts, t: LoadedTrial): void {
  counts.trials++;
  if (t.reward !== null) counts.scored++;
  if (t.status !== "finished") counts.noResult++;
  else if (t.outcome === null) counts.clean++;
  else counts.outcomes[t.outcome] = (counts.outcomes[t.outcome] ?? 0) + 1;
}

export interface LoadJobOptions {
  /** "final" (default): each trial's final attempt; "all": the attempts a retry replaced too. */
  attempts?: "final" | "all";
}

const OPTIONS: Record<keyof LoadJobOptions, true> = { attempts: true };

export async function loadJob(dir: string, options: LoadJobOptions = {}): Promise<LoadedJob> {
  checkOptionKeys("loadJob", options, OPTIONS);
  if (options.attempts !== undefined && options.attempts !== "final" && options.attempts !== "all")
    throw new UserInputError(
      `loadJob: attempts is "final" or "all", not ${JSON.stringify(options.attempts)}`,
    );
  const jobs = await readJobs(dir);
  if (jobs === null) throw new UserInputError(`job folder ${dir} does not exist`);
  const trials: LoadedTrial[] = [];
  const counts = emptyCounts();
  const stopped: LoadedJob["stopped"] = [];
  for (const job of jobs) {
    for (const r of job.rollouts) {
      const replaced = job.superseded.has(r.dir);
      if (replaced && options.attempts !== "all") continue;
      const t = toTrial(r, job, replaced);
      trials.push(t);
      if (!replaced) count(counts, t);
    }
    counts.notStarted += job.summary?.notStarted ?? 0;
    if (job.summary?.stopped) stopped.push({ jobDir: job.dir, ...job.summary.stopped });
  }
  return { jobDirs: jobs.map((j) => j.dir), trials, counts, stopped };
}
