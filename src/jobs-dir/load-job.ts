// Reading jobs back from code: a job folder, or a folder of jobs (such as <jobs-dir>/<agent> with its
// trial-NN jobs). Each is a Rollout, the one record every reader uses. Replaced attempts are left out
// unless asked for; a rollout whose result.json is missing or cut short is still listed, because it
// still belongs to its group. `trials` is upstream's name for the list (bf.load_job's job.trials).
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { checkOptionKeys } from "../options.js";
import { AGENT_ERROR_CATEGORIES, VERIFIER_ERROR_CATEGORIES } from "../schemas/outcome.js";
import { readSummary } from "./job-files.js";
import type { Rollout } from "./rollout.js";
import { scanFound } from "./scan.js";

/** Final attempts only (what summary.json counts), plus the rollouts the run never started. */
export interface JobCounts {
  /** Final attempts listed. */
  rollouts: number;
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
  /** Every rollout read (upstream's name for the list); replaced attempts only with attempts: "all". */
  trials: Rollout[];
  counts: JobCounts;
  /** The jobs whose run stopped starting rollouts (summary.json `stopped`), with why. */
  stopped: Array<{ jobDir: string; reason: string; message: string }>;
}

export interface LoadJobOptions {
  /** "final" (default): each rollout's final attempt; "all": the attempts a retry replaced too. */
  attempts?: "final" | "all";
}

const OPTIONS: Record<keyof LoadJobOptions, true> = { attempts: true };

function emptyCounts(): JobCounts {
  const outcomes: Record<string, number> = {};
  for (const c of [...AGENT_ERROR_CATEGORIES, ...VERIFIER_ERROR_CATEGORIES]) outcomes[c] = 0;
  return { rollouts: 0, scored: 0, clean: 0, noResult: 0, outcomes, notStarted: 0 };
}

function count(counts: JobCounts, r: Rollout): void {
  counts.rollouts++;
  if (r.reward !== null) counts.scored++;
  const category = r.outcome.category;
  if (r.resultState !== "present") counts.noResult++;
  else if (category === null) counts.clean++;
  else counts.outcomes[category] = (counts.outcomes[category] ?? 0) + 1;
}

export async function loadJob(dir: string, options: LoadJobOptions = {}): Promise<LoadedJob> {
  checkOptionKeys("loadJob", options, OPTIONS);
  if (options.attempts !== undefined && options.attempts !== "final" && options.attempts !== "all")
    throw new UserInputError(
      `loadJob: attempts is "final" or "all", not ${JSON.stringify(options.attempts)}`,
    );
  const root = path.resolve(dir);
  if (!(await fs.stat(root).catch(() => null))?.isDirectory())
    throw new UserInputError(`job folder ${dir} does not exist`);
  // Results are read whole, as resume reads them: a result that lacks our fields is cut short.
  const scan = await scanFound(root, dir, { infer: false });
  const rollouts: Rollout[] = [];
  const counts = emptyCounts();
  const stopped: LoadedJob["stopped"] = [];
  for await (const { job, rollouts: ofJob } of scan.eachJob()) {
    for (const r of ofJob) {
      if (r.replaced && options.attempts !== "all") continue;
      rollouts.push(r);
      if (!r.replaced) count(counts, r);
    }
    const summary = await readSummary(job.dir);
    counts.notStarted += summary?.notStarted ?? 0;
    if (summary?.stopped) stopped.push({ jobDir: job.dir, ...summary.stopped });
  }
  return { jobDirs: scan.jobs.map((j) => j.dir), trials: rollouts, counts, stopped };
}
