// Following a folder that a running `bench run` writes: fs.watch recursive (inotify on Linux since
// Node 20) when it works, else polling. Either way the index re-reads only what changed (run-index.ts).
import fs from "node:fs";

export interface Watcher {
  close(): void;
  readonly mode: "watch" | "poll";
}

/** Calls `onChange` at most once per `debounceMs` after changes under root. */
export function watchFolder(
  root: string,
  onChange: () => void,
  opts: { debounceMs?: number; pollMs?: number; forcePoll?: boolean } = {},
): Watcher {
  const debounce = opts.debounceMs ?? 200;
  let timer: NodeJS.Timeout | null = null;
  const kick = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      onChange();
    }, debounce);
    timer.unref();
  };
  if (!opts.forcePoll) {
    try {
      const w = fs.watch(root, { recursive: true, persistent: false }, kick);
      w.on("error", () => undefined);
      return {
        mode: "watch",
        close: () => {
          w.close();
          if (timer) clearTimeout(timer);
        },
      };
    } catch {
      // ERR_FEATURE_UNAVAILABLE_ON_PLATFORM or too many watches: poll instead.
    }
  }
  const iv = setInterval(onChange, opts.pollMs ?? 2000);
  iv.unref();
  return {
    mode: "poll",
    close: () => {
      clearInterval(iv);
      if (timer) clearTimeout(timer);
    },
  };
}
