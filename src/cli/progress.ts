// While a run goes: one redrawn status line on a terminal, one plain line per finished rollout
// otherwise (CI logs stay readable).
import type { EvaluationEvent } from "../job/evaluation.js";
import { rewardOf } from "../job/summary.js";
import { formatReward } from "./format.js";
import { printable } from "./terminal-text.js";

export function createProgress(
  stream: NodeJS.WriteStream,
  opts: { quiet: boolean },
): (e: EvaluationEvent) => void {
  const tty = stream.isTTY === true;
  let running = 0;
  let done = 0;
  let total = 0;
  let passed = 0;
  let errored = 0;
  const t0 = Date.now();
  const redraw = () => {
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    stream.write(
      `\r\x1b[2K${done}/${total} done · ${running} running · ${passed} passed · ${errored} errored · ${secs}s`,
    );
  };
  const line = (text: string) => {
    if (tty) stream.write("\r\x1b[2K");
    stream.write(`${text}\n`);
    if (tty && running > 0) redraw();
  };
  return (e) => {
    switch (e.type) {
      case "plan":
        total = e.plan.jobs.length * e.plan.tasks.length;
        if (!opts.quiet) line(`sandbox: ${e.plan.backend.kind} (${e.plan.sandboxReason})`);
        break;
      case "warning":
        line(`warning: ${printable(e.message)}`);
        break;
      case "rollout-start":
        running++;
        if (tty && !opts.quiet) redraw();
        break;
      case "rollout-end": {
        running--;
        done++;
        const reward = rewardOf(e.result);
        if (reward === 1) passed++;
        if (reward === null) errored++;
        if (opts.quiet) break;
        const verdict =
          reward === null ? `unscored (${e.result.outcome ?? "error"})` : `reward ${formatReward(reward)}`;
        const secs = e.result.timing?.total?.toFixed(2) ?? "?";
        if (tty) redraw();
        else line(`${e.repeat} ${e.result.rollout_name} ${verdict} (${secs}s)`);
        break;
      }
      case "job-end":
        if (tty && running === 0) stream.write("\r\x1b[2K");
        break;
      default:
        break;
    }
  };
}
