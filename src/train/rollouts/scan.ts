// One pass over a jobs tree: every job (with its plan), every rollout's facts, and the attempts that
// are not final. Finding, reading (jobs, their ids and plans, rollout folders) and the attempt rule are
// src/jobs-dir's; this checks the path the user gave and keeps the train side's facts of each rollout.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import {
  discoverJobs,
  type JobInfo,
  type Replaced,
  readJobInfos,
  supersededIn,
} from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import { mapLimit } from "../../util/limit.js";
import { type RolloutFacts, readRollout } from "./facts.js";

export interface ScannedJob {
  job: JobInfo;
  /** Every rollout folder of the job, replaced attempts included, sorted by path. */
  rollouts: RolloutFacts[];
  /** The rollouts that are not final (a marker, or upstream's attempt rule), by dir. */
  retried: Map<string, Replaced>;
}

export interface JobScan {
  root: string;
  displayRoot: string;
  jobs: JobInfo[];
  /** How many rollout folders the jobs hold, replaced attempts included. */
  rolloutFolders: number;
  /** The jobs' rollouts, one job at a time (a job's facts are needed together for its retries). */
  eachJob(): AsyncGenerator<ScannedJob>;
}

export interface Scan {
  root: string;
  displayRoot: string;
  jobs: JobInfo[];
  /** Every rollout folder found, replaced attempts included, sorted by relPath. */
  rollouts: RolloutFacts[];
  retried: Map<string, Replaced>;
}

export async function assertFolder(input: string): Promise<string> {
  const root = path.resolve(input);
  const stat = await fs.stat(root).catch(() => null);
  if (stat?.isFile()) {
    throw new UserInputError(
      `${input} is a file, not a folder; give a rollout folder, a job folder, a folder of jobs, or a .jsonl file (a results.jsonl or trainer rows).`,
    );
  }
  if (!stat?.isDirectory()) {
    throw new UserInputError(
      `${input}: no such folder. Give a rollout folder, a job folder, a folder of jobs, or a results.jsonl.`,
    );
  }
  return root;
}

export async function scanJobs(input: string): Promise<JobScan> {
  const root = await assertFolder(input);
  const found = await discoverJobs(root);
  const jobs = await readJobInfos(found);
  async function* eachJob(): AsyncGenerator<ScannedJob> {
    for (const [i, j] of found.entries()) {
      const job = jobs[i] as JobInfo;
      const rollouts = await mapLimit(j.rolloutDirs, 16, (dir) =>
        readRollout(dir, { job, root, displayRoot: input }),
      );
      yield { job, rollouts, retried: supersededIn(rollouts, job.isEvaluation) };
    }
  }
  const rolloutFolders = found.reduce((n, j) => n + j.rolloutDirs.length, 0);
  return { root, displayRoot: input, jobs, rolloutFolders, eachJob };
}

/** A folder with no rollout in it converts to nothing: refused (exit 2) before anything is written. */
export function assertRollouts(scan: JobScan): void {
  if (scan.rolloutFolders > 0) return;
  throw new UserInputError(
    `${scan.displayRoot} holds no rollout (no <task>__<hex> folder with a result.json below it); nothing was written. Give the folder bench run wrote (its ${opt("jobsDir")}), a job folder or a rollout folder.`,
  );
}

/** Every rollout of every job at once (convert itself goes job by job). */
export async function scanRollouts(input: string): Promise<Scan> {
  const scan = await scanJobs(input);
  const rollouts: RolloutFacts[] = [];
  const retried = new Map<string, Replaced>();
  for await (const j of scan.eachJob()) {
    rollouts.push(...j.rollouts);
    for (const [dir, r] of j.retried) retried.set(dir, r);
  }
  rollouts.sort((a, b) => (a.relPath < b.relPath ? -1 : a.relPath > b.relPath ? 1 : 0));
  return { root: scan.root, displayRoot: input, jobs: scan.jobs, rollouts, retried };
}
