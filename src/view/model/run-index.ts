// The viewer's index of a jobs folder: one compact summary per rollout (summary.ts), read through
// the jobs-dir reader and train's facts, the same as `bench train` reads them. `refresh` re-reads
// only the rollouts whose result.json or replaced.json changed, so a folder a running `bench run`
// writes is followed at the cost of a stat per rollout.
import { promises as fs } from "node:fs";
import path from "node:path";
import {
  discoverJobs,
  type JobInfo,
  REPLACED,
  RESULT,
  readJobInfos,
  supersededIn,
  TRAJECTORY,
  trialOf,
} from "../../jobs-dir/index.js";
import { readRollout } from "../../train/rollouts/facts.js";
import { assertFolder } from "../../train/rollouts/scan.js";
import { mapLimit } from "../../util/limit.js";
import { type RolloutSummary, summaryOf } from "./summary.js";

export interface IndexedJob {
  id: string;
  dir: string;
  /** The job folder below JOBS_DIR. */
  path: string;
  trial: string | null;
  isEvaluation: boolean;
  /** Rollout paths in name order, replaced attempts included. */
  rollouts: string[];
}

const mtimeOf = async (file: string): Promise<number> => {
  const st = await fs.stat(file).catch(() => null);
  return st ? st.mtimeMs : -1;
};

/** What says a rollout changed: its result, its marker and its model calls. */
async function signatureOf(dir: string): Promise<string> {
  const [r, m, t] = await Promise.all([
    mtimeOf(path.join(dir, RESULT)),
    mtimeOf(path.join(dir, REPLACED)),
    mtimeOf(path.join(dir, TRAJECTORY)),
  ]);
  return `${r}:${m}:${t}`;
}

export class RunIndex {
  readonly root: string;
  jobs: IndexedJob[] = [];
  readonly rollouts = new Map<string, RolloutSummary>();
  /** Rollout path -> the attempt that replaced it (a marker, or the attempt rule). */
  superseded = new Map<string, string | null>();
  /** Bumped on every change: caches of groups key on it. */
  version = 0;
  private readonly signatures = new Map<string, string>();
  private refreshing: Promise<string[]> | null = null;
  private again = false;

  private constructor(root: string) {
    this.root = root;
  }

  static async open(jobsDir: string): Promise<RunIndex> {
    const index = new RunIndex(await assertFolder(jobsDir));
    await index.refresh();
    return index;
  }

  relPath(dir: string): string {
    return path.relative(this.root, dir).split(path.sep).join("/") || ".";
  }

  /** Live rollouts (not replaced), in path order. */
  live(): RolloutSummary[] {
    const out: RolloutSummary[] = [];
    for (const j of this.jobs)
      for (const p of j.rollouts) {
        const r = this.rollouts.get(p);
        if (r && !this.superseded.has(p)) out.push(r);
      }
    return out;
  }

  /** Re-reads what changed; the paths of the rollouts that did. Calls made meanwhile run once after. */
  refresh(): Promise<string[]> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      const changed: string[] = [];
      do {
        this.again = false;
        changed.push(...(await this.scan()));
      } while (this.again);
      return [...new Set(changed)];
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async scan(): Promise<string[]> {
    const found = await discoverJobs(this.root);
    const infos = await readJobInfos(found);
    const seen = new Set<string>();
    const changed: string[] = [];
    const jobs: IndexedJob[] = [];
    const superseded = new Map<string, string | null>();
    for (const [i, f] of found.entries()) {
      const job = infos[i] as JobInfo;
      const paths = f.rolloutDirs.map((d) => this.relPath(d));
      await mapLimit(f.rolloutDirs, 32, async (dir) => {
        const p = this.relPath(dir);
        seen.add(p);
        const sig = await signatureOf(dir);
        if (this.signatures.get(p) === sig && this.rollouts.has(p)) return;
        const facts = await readRollout(dir, { job, root: this.root, displayRoot: this.root });
        this.rollouts.set(p, await summaryOf(facts, this.root));
        this.signatures.set(p, sig);
        changed.push(p);
      });
      const summaries = paths.map((p) => this.rollouts.get(p) as RolloutSummary);
      for (const [dir, r] of supersededIn(summaries, f.isEvaluation))
        superseded.set(this.relPath(dir), r.replacedBy);
      jobs.push({
        id: job.id,
        dir: f.dir,
        path: this.relPath(f.dir),
        trial: trialOf(f.dir),
        isEvaluation: f.isEvaluation,
        rollouts: paths,
      });
    }
    for (const p of [...this.rollouts.keys()])
      if (!seen.has(p)) {
        this.rollouts.delete(p);
        this.signatures.delete(p);
        changed.push(p);
      }
    if (changed.length > 0 || jobs.length !== this.jobs.length) this.version++;
    this.jobs = jobs;
    this.superseded = superseded;
    return changed;
  }
}
