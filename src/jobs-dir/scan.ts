// One pass over a jobs tree, the way every reader of a tree reads it: the path the user gave checked,
// its jobs found (with their ids and plans), and each job's rollouts read together so the attempt
// rule can settle them. Convert goes job by job (memory follows the largest job); the others take
// every rollout at once.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { mapLimit } from "../util/limit.js";
import { settleAttempts } from "./attempts.js";
import { discoverJobs } from "./discover.js";
import { type Job, readJobs } from "./job.js";
import { type Rollout, readRollout } from "./rollout.js";

export interface JobRollouts {
  job: Job;
  /** Every rollout folder of the job, replaced attempts included (settled), sorted by path. */
  rollouts: Rollout[];
}

export interface JobsScan {
  root: string;
  displayRoot: string;
  jobs: Job[];
  /** How many rollout folders the jobs hold, replaced attempts included. */
  rolloutFolders: number;
  /** The jobs' rollouts, one job at a time (a job's attempts are settled together). */
  eachJob(): AsyncGenerator<JobRollouts>;
}

export interface ScanOptions {
  /** Fill in what upstream's result.json leaves out (ReadContext.infer); default true. */
  infer?: boolean;
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

/** The jobs under a folder the user gave; their rollouts are read when eachJob asks. */
export async function scanJobs(input: string, opts: ScanOptions = {}): Promise<JobsScan> {
  const root = await assertFolder(input);
  return scanFound(root, input, opts);
}

/** As scanJobs, for a folder already checked (resume's own job folder, loadJob's). */
export async function scanFound(
  root: string,
  displayRoot: string,
  opts: ScanOptions = {},
): Promise<JobsScan> {
  const found = await discoverJobs(root);
  const jobs = await readJobs(found);
  const infer = opts.infer ?? true;
  async function* eachJob(): AsyncGenerator<JobRollouts> {
    for (const [i, f] of found.entries()) {
      const job = jobs[i] as Job;
      const read = await mapLimit(f.rolloutDirs, 16, (dir) =>
        readRollout(dir, { job, root, displayRoot, infer }),
      );
      yield { job, rollouts: settleAttempts(read, job.isEvaluation) };
    }
  }
  const rolloutFolders = found.reduce((n, j) => n + j.rolloutDirs.length, 0);
  return { root, displayRoot, jobs, rolloutFolders, eachJob };
}

/** A folder with no rollout in it converts to nothing: refused (exit 2) before anything is written. */
export function assertRollouts(scan: JobsScan): void {
  if (scan.rolloutFolders > 0) return;
  throw new UserInputError(
    `${scan.displayRoot} holds no rollout (no <task>__<hex> folder with a result.json below it); nothing was written. Give the folder bench run wrote (its ${opt("jobsDir")}), a job folder or a rollout folder.`,
  );
}

/** Every rollout of every job at once, sorted by relPath. */
export async function scanRollouts(
  input: string,
  opts: ScanOptions = {},
): Promise<{ root: string; displayRoot: string; jobs: Job[]; rollouts: Rollout[] }> {
  const scan = await scanJobs(input, opts);
  const rollouts: Rollout[] = [];
  for await (const j of scan.eachJob()) rollouts.push(...j.rollouts);
  rollouts.sort((a, b) => (a.relPath < b.relPath ? -1 : a.relPath > b.relPath ? 1 : 0));
  return { root: scan.root, displayRoot: input, jobs: scan.jobs, rollouts };
}
