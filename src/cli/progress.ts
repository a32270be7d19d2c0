// While a run goes: the live view on a terminal (live-view.ts), nothing per rollout otherwise (the
// result lines say it once, on stdout); the seed's result lines as each repeat job ends, in repeat order.
import type { EvaluationEvent } from "../job/evaluation.js";
import type { RolloutResult } from "../schemas/result.js";
import { rolloutLine } from "./format.js";
import { LiveView } from "./live-view.js";
import { printable } from "./terminal-text.js";

export interface Progress {
  onEvent(e: EvaluationEvent): void;
  /** The result lines not printed yet (jobs that never ended, a quiet run), in the run's order. */
  finish(results: readonly RolloutResult[]): void;
}

export interface ProgressOptions {
  quiet: boolean;
  /** Where the seed's result lines go (stdout); without it they are not printed here. */
  results?: NodeJS.WriteStream;
}

export function createProgress(stream: NodeJS.WriteStream, opts: ProgressOptions): Progress {
  // On a terminal the live view (live-view.ts); elsewhere (a CI log, a pipe) plain lines only.
  const live = stream.isTTY === true && !opts.quiet ? new LiveView(stream) : null;
  const above = (out: NodeJS.WritableStream, text: string) =>
    live ? live.above(out, text) : out.write(`${text}\n`);
  const lines = new RepeatOrder((r, withTask) => {
    if (opts.results) above(opts.results, rolloutLine(r, withTask));
  });
  return {
    onEvent(e) {
      switch (e.type) {
        case "plan":
          lines.plan(e.plan.tasks.length > 1);
          if (!opts.quiet) {
            above(stream, `sandbox: ${e.plan.backend.kind} (${e.plan.sandboxReason})`);
            for (const note of e.plan.notes) above(stream, `note: ${printable(note)}`);
          }
          break;
        case "warning":
          // -q: errors and the final lines only; a warning stays in config.json (sandbox_warnings).
          if (!opts.quiet) above(stream, `warning: ${printable(e.message)}`);
          break;
        case "job-end":
          if (!opts.quiet) lines.jobEnded(e.outcome.repeat, e.outcome.results);
          break;
        default:
          break;
      }
      live?.onEvent(e);
    },
    finish(results) {
      live?.finish();
      lines.rest(results);
    },
  };
}

/**
 * The result lines of each repeat job once it ends, in repeat order: with --parallel-jobs a later
 * repeat may end first, and waits for the ones before it. Each line is printed once.
 */
class RepeatOrder {
  private readonly ended = new Map<number, readonly RolloutResult[]>();
  private readonly printed = new Set<RolloutResult>();
  private next = 1;
  private withTask = false;

  constructor(private readonly print: (r: RolloutResult, withTask: boolean) => void) {}

  plan(withTask: boolean): void {
    this.withTask = withTask;
  }

  jobEnded(repeat: string, results: readonly RolloutResult[]): void {
    const index = Number(/(\d+)$/.exec(repeat)?.[1] ?? Number.NaN);
    if (!Number.isInteger(index)) return;
    this.ended.set(index, results);
    for (let got = this.ended.get(this.next); got; got = this.ended.get(this.next)) {
      for (const r of got) this.once(r);
      this.next++;
    }
  }

  rest(results: readonly RolloutResult[]): void {
    for (const r of results) this.once(r);
  }

  private once(r: RolloutResult): void {
    if (this.printed.has(r)) return;
    this.printed.add(r);
    this.print(r, this.withTask);
  }
}
