// Reading jobs back: a job folder, or a folder of jobs (such as <jobs-dir>/<agent> with its
// trial-NN jobs). Replaced attempts are left out unless asked for; a trial whose result.json is
// missing or cut short is still listed, because it still belongs to its group.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { outcomeOf, type ScoreOutcome, scoreOutcomeOf } from "../schemas/outcome.js";
import type { TrialResult } from "../schemas/result.js";
import { type Attempt, type AttemptState, finalAttempt, scanAttempts } from "./attempts.js";
import { rewardOf } from "./summary.js";

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
  rewards: TrialResult["rewards"];
  outcome: string | null;
  scoreOutcome: ScoreOutcome;
  errorCategory: string | null;
  verifierErrorCategory: string | null;
  error: string | null;
  verifierError: string | null;
  attempt: number;
  replaced: boolean;
  result: TrialResult | null;
}

export interface LoadedJob {
  jobDirs: string[];
  trials: LoadedTrial[];
}

const MAX_DEPTH = 4;

function isJobDir(entries: string[]): boolean {
  return (
    entries.includes("evaluation.json") ||
    entries.includes("summary.json") ||
    entries.some((e) => /__[0-9a-f]{8}$/.test(e))
  );
}

async function findJobDirs(dir: string, depth: number): Promise<string[]> {
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch {
    return [];
  }
  if (isJobDir(entries)) return [dir];
  if (depth >= MAX_DEPTH) return [];
  const nested = await Promise.all(entries.sort().map((e) => findJobDirs(path.join(dir, e), depth + 1)));
  return nested.flat();
}

function toTrial(a: Attempt, jobDir: string, replaced: boolean): LoadedTrial {
  const r = a.result;
  const reward = r ? rewardOf(r) : null;
  const errorCategory = r?.error_category ?? null;
  const verifierErrorCategory = r?.verifier_error_category ?? null;
  const trialDir = path.basename(path.dirname(jobDir));
  return {
    taskName: a.task,
    rolloutName: a.name,
    path: a.dir,
    jobName: path.basename(jobDir),
    jobDir,
    trial: /^trial-\d+$/.test(trialDir) ? trialDir : null,
    status: a.state,
    reward,
    rewards: r?.rewards ?? null,
    outcome: r ? (r.outcome ?? outcomeOf(errorCategory, verifierErrorCategory)) : null,
    scoreOutcome: scoreOutcomeOf({
      reward,
      error_category: errorCategory ?? (r ? null : "infra_error"),
      verifier_error_category: verifierErrorCategory,
    }),
    errorCategory,
    verifierErrorCategory,
    error: r?.error ?? null,
    verifierError: r?.verifier_error ?? null,
    attempt: r?.attempt ?? 1,
    replaced,
    result: r,
  };
}

export async function loadJob(dir: string, options: { attempts?: "final" | "all" } = {}): Promise<LoadedJob> {
  const root = path.resolve(dir);
  const stat = await fs.stat(root).catch(() => null);
  if (!stat?.isDirectory()) throw new UserInputError(`job folder ${dir} does not exist`);
  const jobDirs = await findJobDirs(root, 0);
  const trials: LoadedTrial[] = [];
  for (const jobDir of jobDirs) {
    const byTask = await scanAttempts(jobDir);
    for (const attempts of byTask.values()) {
      const final = finalAttempt(attempts);
      for (const a of attempts) {
        if (a === final) trials.push(toTrial(a, jobDir, false));
        else if (options.attempts === "all") trials.push(toTrial(a, jobDir, true));
      }
    }
  }
  return { jobDirs, trials };
}
