// Change notification for the stream: one inotify watch per folder that can still change (a job
// folder, a rollout without its result), so a new result.json wakes the stream at once. Where
// watches fail (NFS, some volume mounts, too many watches), the caller's polling still finds it.
import { type FSWatcher, watch } from "node:fs";

export class ChangeWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private dirty = new Set<string>();
  private wake: (() => void) | null = null;
  private eventsWork = true;

  watch(dir: string): void {
    if (!this.eventsWork || this.watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, () => this.mark(dir));
      w.on("error", () => {
        this.unwatch(dir);
        this.mark(dir);
      });
      this.watchers.set(dir, w);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Out of inotify watches or a file system without events: rely on polling from now on.
      if (code === "ENOSPC" || code === "EMFILE" || code === "ENOSYS" || code === "EPERM")
        this.eventsWork = false;
    }
  }

  unwatch(dir: string): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
  }

  private mark(dir: string): void {
    this.dirty.add(dir);
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The folders that changed since the last call. */
  takeDirty(): Set<string> {
    const d = this.dirty;
    this.dirty = new Set();
    return d;
  }

  /** Resolves on the next change, or after ms, or at once if something already changed. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.dirty.size > 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
      this.wake = done;
    });
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    this.wake?.();
  }
}
