// A job folder read whole: its plan, its summary, every rollout folder, and which rollouts are not
// final under the attempt rule. loadJob reads jobs this way; the train side reads the same rollouts
// through readRolloutFolder and settles them with the same supersededIn.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { EvaluationPlan } from "../schemas/result.js";
import { mapLimit } from "../util/limit.js";
import { supersededIn } from "./attempts.js";
import { discoverJobs, type FoundJob, jobIds } from "./discover.js";
import { readPlan, readSummary, type SummaryFacts } from "./job-files.js";
import { repeatOf } from "./layout.js";
import { type Replaced, type RolloutFolder, readRolloutFolder } from "./rollout.js";

export interface JobFolder {
  dir: string;
  /** trial-NN when the job sits in such a folder. */
  trial: string | null;
  isEvaluation: boolean;
  plan: EvaluationPlan | null;
  summary: SummaryFacts | null;
  /** Every rollout folder, replaced attempts included, sorted by name. */
  rollouts: RolloutFolder[];
  /** The rollouts that are not final, by dir, and what replaced them. */
  superseded: Map<string, Replaced>;
}

/** A job as the readers name it: its folder, its id, and its plan when it is a job of an evaluation. */
export interface JobInfo {
  dir: string;
  /** The folder's name, or its path below the jobs' common folder when names repeat (jobIds). */
  id: string;
  plan: EvaluationPlan | null;
  isEvaluation: boolean;
}

/** The JobInfo of a found job; `ids` from jobIds over every job found with it. */
export async function readJobInfo(found: FoundJob, ids: Map<string, string>): Promise<JobInfo> {
  return {
    dir: found.dir,
    id: ids.get(found.dir) ?? path.basename(found.dir),
    plan: found.isEvaluation ? await readPlan(found.dir) : null,
    isEvaluation: found.isEvaluation,
  };
}

/** The JobInfo of every found job. */
export async function readJobInfos(found: readonly FoundJob[]): Promise<JobInfo[]> {
  const ids = jobIds(found.map((j) => j.dir));
  return mapLimit(found, 8, (j) => readJobInfo(j, ids));
}

export async function readJobFolder(found: FoundJob): Promise<JobFolder> {
  const [plan, summary] = await Promise.all([
    found.isEvaluation ? readPlan(found.dir) : null,
    readSummary(found.dir),
  ]);
  const rollouts = await mapLimit(found.rolloutDirs, 16, (dir) => readRolloutFolder(dir, { plan }));
  return {
    dir: found.dir,
    trial: repeatOf(found.dir),
    isEvaluation: found.isEvaluation,
    plan,
    summary,
    rollouts,
    superseded: supersededIn(rollouts, found.isEvaluation),
  };
}

/** The final attempts of a job folder, in name order. */
export function finalRollouts(job: JobFolder): RolloutFolder[] {
  return job.rollouts.filter((r) => !job.superseded.has(r.dir));
}

/** Every job under a folder, read whole, one after another (sorted by path). null: no such folder. */
export async function readJobs(root: string): Promise<JobFolder[] | null> {
  const abs = path.resolve(root);
  const stat = await fs.stat(abs).catch(() => null);
  if (!stat?.isDirectory()) return null;
  const found = await discoverJobs(abs);
  const out: JobFolder[] = [];
  for (const j of found) out.push(await readJobFolder(j));
  return out;
}
