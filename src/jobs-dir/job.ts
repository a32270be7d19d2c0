// A job folder as the readers name it: its folder, its id, the repeat it is, and its plan when it is
// a job of an evaluation (a run's plan says which tasks to expect and which agent and model ran).
import path from "node:path";
import { mapLimit } from "../util/limit.js";
import { type FoundJob, jobIds } from "./discover.js";
import { type PlanFacts, readPlan } from "./job-files.js";
import { repeatOf } from "./layout.js";

export interface Job {
  dir: string;
  /** The folder's name: the job name every repeat of one run shares (`--job-name`). */
  name: string;
  /** The folder's name, or its path below the jobs' common folder when names repeat (jobIds). */
  id: string;
  /** `trial-01` when the job is a repeat of `--trials N` (it sits in such a folder), else null. */
  repeat: string | null;
  /** A job of an evaluation (plan, summary or lock): attempts of one task in it are retries. */
  isEvaluation: boolean;
  plan: PlanFacts | null;
}

/** The Job of a found job; `ids` from jobIds over every job found with it. */
export async function readJob(found: FoundJob, ids: Map<string, string>): Promise<Job> {
  return {
    dir: found.dir,
    name: path.basename(found.dir),
    id: ids.get(found.dir) ?? path.basename(found.dir),
    repeat: repeatOf(found.dir),
    isEvaluation: found.isEvaluation,
    plan: found.isEvaluation ? await readPlan(found.dir) : null,
  };
}

/** The Job of every found job, in the order found. */
export async function readJobs(found: readonly FoundJob[]): Promise<Job[]> {
  const ids = jobIds(found.map((j) => j.dir));
  return mapLimit(found, 8, (j) => readJob(j, ids));
}
