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
  const debounce = opts.debounceMs ?? 100;
  const pollMs = opts.pollMs ?? 2000;
  const watches = new Map<string, fs.FSWatcher>();
  let mode: "watch" | "poll" = opts.forcePoll ? "poll" : "watch";
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const scope = { full: false, jobs: new Set<string>() };
  const jobDirs = () => new Set(index.jobs.map((j) => j.dir));

  const run = () => {
    timer = null;
    const s = { full: scope.full, jobs: [...scope.jobs] };
    scope.full = false;
    scope.jobs.clear();
    index
      .refresh(s)
      .then((changed) => {
        if (closed) return;
        sync();
        onChanged(changed);
      })
      .catch(() => undefined);
  };
  const kick = (dir: string) => {
    const jobs = jobDirs();
    if (jobs.has(dir)) scope.jobs.add(dir);
    else if (jobs.has(path.dirname(dir))) scope.jobs.add(path.dirname(dir));
    if (!timer) {
      timer = setTimeout(run, debounce);
      timer.unref();
    }
  };

  function sync(): void {
    if (mode !== "watch" || closed) return;
    const want = new Set([
      index.root,
      ...index.above,
      ...jobDirs(),
      ...index.pendingDirs().slice(0, MAX_WATCHES),
    ]);
    for (const [dir, w] of watches)
      if (!want.has(dir)) {
        w.close();
        watches.delete(dir);
      }
    for (const dir of want) {
      if (watches.has(dir)) continue;
      try {
        const w = fs.watch(dir, { persistent: false }, () => kick(dir));
        w.on("error", () => {
          w.close();
          watches.delete(dir);
        });
        watches.set(dir, w);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // ENOSPC: out of inotify watches. Poll instead.
        if (code !== "ENOENT") {
          mode = "poll";
          for (const x of watches.values()) x.close();
          watches.clear();
          return;
        }
      }
    }
  }

  sync();
  const iv = setInterval(() => {
    if (timer) return;
    if (mode === "poll") scope.full = true;
    else if (index.pendingDirs().length === 0) return;
    timer = setTimeout(run, 0);
    timer.unref();
  }, pollMs);
  iv.unref();
  return {
    get mode() {
      return mode;
    },
    close: () => {
      closed = true;
      clearInterval(iv);
      if (timer) clearTimeout(timer);
      for (const w of watches.values()) w.close();
      watches.clear();
    },
  };
}
