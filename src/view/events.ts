// `/events`: the pages' live feed. One event per rollout that changed, so an open page fills in as
// `bench run` writes; a batch as large as the first read of a big folder is one progress event.
import type { SSEStreamingApi } from "hono/streaming";
import type { RunIndex } from "./model/run-index.js";

/** Who hears of changed rollouts: one listener per open feed. */
export type ChangeListeners = Set<(paths: string[]) => void>;

const BATCH = 32;
/** A comment now and then keeps proxies from closing an idle feed. */
const KEEP_ALIVE_MS = 15000;

export async function streamEvents(
  stream: SSEStreamingApi,
  index: RunIndex,
  listeners: ChangeListeners,
): Promise<void> {
  const queue: string[] = [];
  const progress = () => ({ type: "progress", ...index.progress });
  let wake: (() => void) | null = null;
  // One event per rollout; a batch of the first read of a large folder is one progress event.
  const listener = (paths: string[]) => {
    if (paths.length > BATCH) queue.push("");
    else queue.push(...paths);
    wake?.();
  };
  listeners.add(listener);
  stream.onAbort(() => {
    listeners.delete(listener);
    wake?.();
  });
  await stream.writeSSE({ data: JSON.stringify({ type: "hello", rollouts: index.rollouts.size }) });
  while (!stream.aborted && !stream.closed) {
    if (queue.length === 0) {
      await new Promise<void>((res) => {
        wake = res;
        setTimeout(res, KEEP_ALIVE_MS).unref();
      });
      wake = null;
      if (queue.length === 0 && !stream.aborted) await stream.write(": keep-alive\n\n");
      continue;
    }
    const p = queue.shift() as string;
    await stream.writeSSE({ data: JSON.stringify(p === "" ? progress() : { type: "rollout", path: p }) });
  }
  listeners.delete(listener);
}
