// The stream's view of the jobs under its path: which rollouts are still running, which just
// finished, and when a retry-able failure is final. Folders that can still change are watched.
import path from "node:path";
import {
  discoverJobs,
  type Job,
  type JobState,
  jobIds,
  jobState,
  type Rollout,
  type RunStop,
  readJob,
  readPlan,
  readRollout,
  readSummary,
  rolloutDirsIn,
  type SummaryFacts,
  settleAttempts,
} from "../../jobs-dir/index.js";
import { isRetryable } from "../../schemas/outcome.js";
import { exists } from "../../util/fs.js";
import type { ChangeWatcher } from "./watch.js";

interface TrackedJob {
  info: Job;
  state: JobState;
  pending: Map<string, Rollout | null>;
  done: Map<string, Rollout>;
  /** summary.json once the job finished: not_started, and whether the run stopped starting rollouts. */
  summary: SummaryFacts | null;
}

// A result.json that does not parse may be mid-write by a writer that is not atomic: give it time.
const SETTLE_MS = 2000;

export class JobTracker {
  readonly jobs = new Map<string, TrackedJob>();
  private readonly searchDirs = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly displayRoot: string,
    private readonly watcher: ChangeWatcher,
  ) {}

  /** Finds new jobs; `dirty` null means look at everything (a poll). */
  /** The rollouts that became final; a replaced attempt among them has `replaced` set. */
  async refresh(dirty: Set<string> | null, finalScan: boolean): Promise<Rollout[]> {
    if (dirty === null || this.jobs.size === 0 || [...this.searchDirs].some((d) => dirty.has(d)))
      await this.discover();
    const out: Rollout[] = [];
    for (const job of this.jobs.values()) {
      if (job.state === "finished" && job.pending.size === 0) continue;
      if (dirty === null || dirty.has(job.info.dir)) await this.rescanJob(job);
      out.push(...(await this.settleJob(job, dirty, finalScan)));
    }
    return out;
  }

  /**
   * finished: every job finished; halted: the run stopped starting rollouts (a summary.json says
   * `stopped`) and nothing runs, the jobs left waiting will never start; stopped: a job's process
   * died and nothing runs; else running.
   */
  verdict(): "running" | "finished" | "halted" | "stopped" {
    const states = [...this.jobs.values()].map((j) => j.state);
    const halted = this.stop() !== null;
    if (states.length > 0 && states.every((s) => s === "finished")) return halted ? "halted" : "finished";
    if (halted && !states.includes("running") && !states.includes("stopped")) return "halted";
    if (states.includes("stopped") && !states.includes("running")) return "stopped";
    return "running";
  }

  /** Why the run stopped starting rollouts, from the first job whose summary says so. */
  stop(): RunStop | null {
    for (const j of this.jobs.values()) if (j.summary?.stopped) return j.summary.stopped;
    return null;
  }

  /**
   * Planned rollouts the run never started: each finished job's `not_started`; once the run has
   * stopped, a job still waiting for its turn (no summary written yet) will never start a task.
   */
  notStarted(): number {
    const halted = this.stop() !== null;
    let n = 0;
    for (const j of this.jobs.values()) {
      if (j.summary) n += j.summary.notStarted;
      else if (halted && j.state === "waiting") n += j.info.plan?.tasks?.length ?? 0;
    }
    return n;
  }

  private async discover(): Promise<void> {
    await this.watchNearestFolder();
    const found = await discoverJobs(this.root, (dir) => {
      this.searchDirs.add(dir);
      this.watcher.watch(dir);
    });
    const ids = jobIds(found.map((j) => j.dir));
    for (const f of found) {
      const known = this.jobs.get(f.dir);
      if (known) {
        known.info.id = ids.get(f.dir) ?? known.info.id;
        continue;
      }
      const info = await readJob(f, ids);
      const job: TrackedJob = { info, state: "waiting", pending: new Map(), done: new Map(), summary: null };
      this.jobs.set(f.dir, job);
      this.watcher.watch(f.dir);
      for (const dir of f.rolloutDirs) this.track(job, dir);
    }
  }

  /** While the path does not exist yet, the closest folder above it tells us when it appears. */
  private async watchNearestFolder(): Promise<void> {
    let dir = this.root;
    while (!(await exists(dir))) {
      const up = path.dirname(dir);
      if (up === dir) return;
      dir = up;
    }
    if (dir === this.root) return;
    this.searchDirs.add(dir);
    this.watcher.watch(dir);
  }

  private track(job: TrackedJob, dir: string): void {
    if (job.pending.has(dir) || job.done.has(dir)) return;
    job.pending.set(dir, null);
    this.watcher.watch(dir);
  }

  private async rescanJob(job: TrackedJob): Promise<void> {
    if (!job.info.plan && job.info.isEvaluation) job.info.plan = await readPlan(job.info.dir);
    for (const dir of await rolloutDirsIn(job.info.dir)) this.track(job, dir);
  }

  private finish(job: TrackedJob, r: Rollout, out: Rollout[]): void {
    job.pending.delete(r.dir);
    job.done.set(r.dir, r);
    this.watcher.unwatch(r.dir);
    out.push(r);
  }

  /**
   * bench run retries infrastructure failures (not an interrupted run) when its plan allows retries.
   * Such a rollout is held until a retry replaces it or the job ends: it is unscored, so its group
   * is withheld either way, and holding it costs that group nothing.
   */
  private retryable(job: TrackedJob, r: Rollout): boolean {
    const category = r.outcome.errorCategory;
    return (job.info.plan?.retryAttempts ?? 0) > 0 && isRetryable(category, r.outcome.attribution);
  }

  private async settleJob(
    job: TrackedJob,
    dirty: Set<string> | null,
    finalScan: boolean,
  ): Promise<Rollout[]> {
    const started = job.info.isEvaluation && job.info.plan !== null && job.pending.size + job.done.size > 0;
    job.state = await jobState(job.info.dir, started);
    if (job.state === "finished" && job.summary === null) job.summary = await readSummary(job.info.dir);
    const ended = job.state === "finished" || job.state === "stopped";
    const out: Rollout[] = [];
    const where = { job: job.info, root: this.root, displayRoot: this.displayRoot, infer: true };
    for (const [dir, known] of job.pending) {
      if (known === null || dirty === null || dirty.has(dir) || ended || finalScan) {
        job.pending.set(dir, await readRollout(dir, where));
      }
    }
    const pending = [...job.pending.values()] as Rollout[];
    // At the end of a job (or of a single scan), the attempt rule (src/jobs-dir) decides what a retry
    // replaced; before that only a replaced.json does.
    const settled =
      ended || finalScan
        ? settleAttempts([...job.done.values(), ...pending], job.info.isEvaluation).slice(job.done.size)
        : pending;
    for (const r of settled) {
      if (r.replaced) this.finish(job, r, out);
      else if (r.resultState === "present" && (ended || finalScan || !this.retryable(job, r)))
        this.finish(job, r, out);
      else if (r.resultState === "truncated" && (ended || finalScan || Date.now() - r.mtimeMs > SETTLE_MS)) {
        this.finish(job, r, out);
      } else if (r.resultState === "missing" && ended) this.finish(job, r, out);
    }
    if (ended) this.watcher.unwatch(job.info.dir);
    return out;
  }
}
