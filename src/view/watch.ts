// Following a folder that a running `bench run` writes. Not fs.watch recursive: on Linux, Node 20
// emulates it by walking and watching every folder and remembering every file (about 95 MB of heap
// for 10,000 rollouts here). Instead one inotify watch per folder that can change: the jobs folder
// and those above the jobs (new jobs), each job folder (new rollouts, retries), and each rollout
// still without its result.json (the result renamed in). A timer re-reads those pending rollouts
// too, so a change between a read and its watch is never lost. If watching fails: polling.
import fs from "node:fs";
import path from "node:path";
import type { RunIndex } from "./model/run-index.js";

const MAX_WATCHES = 2000;

export interface Watcher {
  close(): void;
  readonly mode: "watch" | "poll";
}

export function watchIndex(
  index: RunIndex,
  onChanged: (paths: string[]) => void,
  opts: { debounceMs?: number; pollMs?: number; forcePoll?: boolean } = {},
): Watcher {
  const watch = new IndexWatch(index, onChanged, opts.debounceMs ?? 100, opts.forcePoll ? "poll" : "watch");
  watch.sync();
  const iv = setInterval(() => watch.tick(), opts.pollMs ?? 2000);
  iv.unref();
  return {
    get mode() {
      return watch.mode;
    },
    close: () => {
      clearInterval(iv);
      watch.close();
    },
  };
}

/** The watches, and the refresh they start: what changed is gathered for `debounce` ms, read once. */
class IndexWatch {
  private readonly watches = new Map<string, fs.FSWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** What the next refresh reads: every folder (polling), or only the jobs a watch saw change. */
  private readonly scope = { full: false, jobs: new Set<string>() };

  constructor(
    private readonly index: RunIndex,
    private readonly onChanged: (paths: string[]) => void,
    private readonly debounce: number,
    public mode: "watch" | "poll",
  ) {}

  private jobDirs(): Set<string> {
    return new Set(this.index.jobs.map((j) => j.dir));
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => this.run(), delay);
    this.timer.unref();
  }

  /** Re-read what changed, then watch what can change now (a new job, a rollout still running). */
  private run(): void {
    this.timer = null;
    const s = { full: this.scope.full, jobs: [...this.scope.jobs] };
    this.scope.full = false;
    this.scope.jobs.clear();
    this.index
      .refresh(s)
      .then((changed) => {
        if (this.closed) return;
        this.sync();
        this.onChanged(changed);
      })
      .catch(() => undefined);
  }

  /** A watch fired in `dir`: a job folder, or a rollout folder in one. */
  private kick(dir: string): void {
    const jobs = this.jobDirs();
    if (jobs.has(dir)) this.scope.jobs.add(dir);
    else if (jobs.has(path.dirname(dir))) this.scope.jobs.add(path.dirname(dir));
    if (!this.timer) this.schedule(this.debounce);
  }

  /** One watch per folder that can change, no more: those that cannot any longer are closed. */
  sync(): void {
    if (this.mode !== "watch" || this.closed) return;
    const want = new Set([
      this.index.root,
      ...this.index.above,
      ...this.jobDirs(),
      ...this.index.pendingDirs().slice(0, MAX_WATCHES),
    ]);
    for (const [dir, w] of this.watches)
      if (!want.has(dir)) {
        w.close();
        this.watches.delete(dir);
      }
    for (const dir of want) {
      if (this.watches.has(dir)) continue;
      if (!this.watch(dir)) return;
    }
  }

  /** False when watching failed for good and this fell back to polling. */
  private watch(dir: string): boolean {
    try {
      const w = fs.watch(dir, { persistent: false }, () => this.kick(dir));
      w.on("error", () => {
        w.close();
        this.watches.delete(dir);
      });
      this.watches.set(dir, w);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOENT: the folder went away meanwhile. Anything else (ENOSPC: out of inotify watches): poll.
      if (code === "ENOENT") return true;
      this.mode = "poll";
      for (const x of this.watches.values()) x.close();
      this.watches.clear();
      return false;
    }
  }

  /** The timer's look: everything when polling, else the rollouts still without a result. */
  tick(): void {
    if (this.timer) return;
    if (this.mode === "poll") this.scope.full = true;
    else if (this.index.pendingDirs().length === 0) return;
    this.schedule(0);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
  }
}
