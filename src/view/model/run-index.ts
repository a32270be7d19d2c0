// The viewer's index of a jobs folder: one Rollout record per rollout folder, with its call facts,
// read through src/jobs-dir the same as `bench train` reads them.
//
// Opening finds the folders first (cheap: a readdir per job) and reads the rollouts after, in path
// order, so a server can answer while a large folder is still being read (`progress` says how far;
// the pages say so). A refresh re-reads only what can have changed: new rollout folders, rollouts
// without a final result yet, and, in the jobs a change was seen in, folders whose mtime moved (a
// result.json or replaced.json renamed in changes it).
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import {
  assertFolder,
  discoverJobs,
  type FoundJob,
  type Job,
  jobIds,
  type Rollout,
  readJob,
  readRollout,
  settleAttempts,
  withCalls,
} from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import { mapLimit } from "../../util/limit.js";
import { compact } from "./summary.js";

export interface IndexedJob {
  id: string;
  dir: string;
  /** The job folder below JOBS_DIR. */
  path: string;
  /** `trial-01` when the job is a repeat of `--trials N`. */
  repeat: string | null;
  isEvaluation: boolean;
  /** Rollout paths in name order, replaced attempts included. */
  rollouts: string[];
}

export interface Progress {
  /** Rollout folders read so far, of those found. */
  read: number;
  total: number;
}

type Listener = (changed: string[]) => void;

const BATCH = 256;

export class RunIndex {
  readonly root: string;
  jobs: IndexedJob[] = [];
  /** Rollout path -> its record, settled by the attempt rule within its job. */
  readonly rollouts = new Map<string, Rollout>();
  /** Rollout path -> the attempt that replaced it (a marker, or the attempt rule). */
  replaced = new Map<string, string | null>();
  /** Folders above the jobs (new jobs appear in them). */
  above: string[] = [];
  /** Bumped on every change: caches of groups key on it. */
  version = 0;
  private infos = new Map<string, Job>();
  private found: FoundJob[] = [];
  private running: Promise<string[]> | null = null;
  private queued: { full: boolean; jobs: Set<string> } | null = null;
  private readonly listeners = new Set<Listener>();
  private total = 0;

  private constructor(root: string) {
    this.root = root;
  }

  /**
   * The index of a folder. `background`: return once the folders are found and read the rollouts
   * after (a server's first page need not wait for 10,000 result.json files); `ready` settles then.
   */
  static async open(jobsDir: string, opts: { background?: boolean } = {}): Promise<RunIndex> {
    const stat = await fs.stat(jobsDir).catch(() => null);
    if (!stat?.isDirectory())
      throw new UserInputError(
        `${jobsDir}: ${stat ? "is a file" : "no such folder"}; give the jobs folder bench run wrote (its ${opt("jobsDir")}, default jobs), or a job or trial-NN folder in it.`,
      );
    const index = new RunIndex(await assertFolder(jobsDir));
    const first = index.refresh({ full: true });
    if (opts.background) await index.discovered;
    else await first;
    return index;
  }

  private discovered: Promise<void> = Promise.resolve();
  private markDiscovered: () => void = () => undefined;

  /** Settles when every rollout found so far has been read. */
  get ready(): Promise<void> {
    return (this.running ?? Promise.resolve([])).then(() => undefined);
  }

  get progress(): Progress {
    return { read: this.total - this.unread(), total: this.total };
  }

  private unread(): number {
    let n = 0;
    for (const j of this.jobs) for (const p of j.rollouts) if (!this.rollouts.has(p)) n++;
    return n;
  }

  onChange(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  relPath(dir: string): string {
    // The reader builds every folder it finds by joining onto the root: a prefix cut, not path.relative
    // (which resolves both paths; three times per rollout per refresh adds up at 10,000).
    const prefix = this.root.endsWith(path.sep) ? this.root : this.root + path.sep;
    const rel = dir.startsWith(prefix) ? dir.slice(prefix.length) : path.relative(this.root, dir);
    return (path.sep === "/" ? rel : rel.split(path.sep).join("/")) || ".";
  }

  /** Read rollouts that are not replaced, in path order. */
  live(): Rollout[] {
    const out: Rollout[] = [];
    for (const j of this.jobs)
      for (const p of j.rollouts) {
        const r = this.rollouts.get(p);
        if (r && !this.replaced.has(p)) out.push(r);
      }
    return out;
  }

  /** Rollouts still waiting for their final result.json: the folders worth watching. */
  pendingDirs(): string[] {
    const out: string[] = [];
    for (const r of this.rollouts.values()) if (r.resultState !== "present") out.push(r.dir);
    return out;
  }

  /**
   * Re-reads what can have changed; `jobs`: job folders a change was seen in (their rollouts'
   * mtimes are checked), `full`: every job's. Calls made meanwhile are merged and run once after.
   */
  refresh(scope: { full?: boolean; jobs?: Iterable<string> } = {}): Promise<string[]> {
    if (this.running) {
      this.queued ??= { full: false, jobs: new Set() };
      this.queued.full ||= scope.full === true;
      for (const j of scope.jobs ?? []) this.queued.jobs.add(j);
      return this.running;
    }
    this.discovered = new Promise((r) => {
      this.markDiscovered = r;
    });
    const run = (async () => {
      const changed: string[] = [];
      let next: { full: boolean; jobs: Set<string> } | null = {
        full: scope.full === true,
        jobs: new Set(scope.jobs ?? []),
      };
      while (next) {
        changed.push(...(await this.scan(next.full, next.jobs)));
        next = this.queued;
        this.queued = null;
      }
      return [...new Set(changed)];
    })().finally(() => {
      this.running = null;
      this.markDiscovered();
    });
    this.running = run;
    return run;
  }

  private async scan(full: boolean, scoped: Set<string>): Promise<string[]> {
    const above: string[] = [];
    const found = await discoverJobs(this.root, (d) => above.push(d));
    const ids = jobIds(found.map((f) => f.dir));
    const byDir = new Map(this.found.map((f) => [f.dir, f]));
    const infos = new Map<string, Job>();
    await mapLimit(found, 8, async (f) => {
      const known = this.infos.get(f.dir);
      // A job's plan is written before its first rollout: read it again only for a job new here.
      infos.set(
        f.dir,
        known && known.id === ids.get(f.dir) && byDir.has(f.dir) ? known : await readJob(f, ids),
      );
    });
    const seen = new Set<string>();
    const todo: Array<{ dir: string; p: string; job: Job }> = [];
    const checks: Array<{ dir: string; p: string; job: Job }> = [];
    for (const f of found) {
      const job = infos.get(f.dir) as Job;
      const check = full || scoped.has(f.dir);
      for (const dir of f.rolloutDirs) {
        const p = this.relPath(dir);
        seen.add(p);
        const had = this.rollouts.get(p);
        if (had?.resultState !== "present" || had.job.id !== job.id) todo.push({ dir, p, job });
        else if (check) checks.push({ dir, p, job });
      }
    }
    // A finished rollout changes only by a file renamed into its folder (a retry's replaced.json).
    await mapLimit(checks, 32, async (c) => {
      const st = await fs.stat(c.dir).catch(() => null);
      if (st?.mtimeMs !== this.rollouts.get(c.p)?.mtimeMs) todo.push(c);
    });
    const removed: string[] = [];
    for (const p of [...this.rollouts.keys()])
      if (!seen.has(p)) {
        this.rollouts.delete(p);
        removed.push(p);
      }
    this.found = found;
    this.infos = infos;
    this.above = above;
    this.jobs = found.map((f) => ({
      id: (infos.get(f.dir) as Job).id,
      dir: f.dir,
      path: this.relPath(f.dir),
      repeat: (infos.get(f.dir) as Job).repeat,
      isEvaluation: f.isEvaluation,
      rollouts: f.rolloutDirs.map((d) => this.relPath(d)),
    }));
    this.total = seen.size;
    this.settle();
    if (removed.length > 0 || todo.length > 0) this.version++;
    this.markDiscovered();
    const changed = [...removed];
    // One pool over every folder to read (no barrier per batch); the pages hear of each BATCH read.
    let batch: string[] = [];
    const flush = () => {
      if (batch.length === 0) return;
      const done = batch;
      batch = [];
      changed.push(...done);
      this.settle();
      this.version++;
      this.emit(done);
    };
    await mapLimit(todo, 32, async ({ dir, p, job }) => {
      const read = await readRollout(dir, { job, root: this.root, displayRoot: this.root, infer: true });
      this.rollouts.set(p, compact(await withCalls(read)));
      batch.push(p);
      if (batch.length >= BATCH) flush();
    });
    flush();
    if (removed.length > 0) this.emit(removed);
    return changed;
  }

  /** The attempt rule over each job's read rollouts: every record says whether it is final. */
  private settle(): void {
    const replaced = new Map<string, string | null>();
    for (const f of this.found) {
      const read = f.rolloutDirs
        .map((d) => this.rollouts.get(this.relPath(d)))
        .filter((r) => r !== undefined);
      for (const r of settleAttempts(read, f.isEvaluation)) {
        const key = this.relPath(r.dir);
        this.rollouts.set(key, r);
        if (r.replaced) replaced.set(key, r.replaced.replacedBy);
      }
    }
    this.replaced = replaced;
  }

  private emit(changed: string[]): void {
    if (changed.length === 0) return;
    for (const l of this.listeners) l(changed);
  }
}
