// The live view of a run on a terminal: per task, its group filling (done, running, failed) with
// each reward as it lands and the mean so far; each running rollout's phase and how long it has been
// in it; the run's ETA from the rollouts that finished, and a clock that ticks. The region is redrawn
// with log-update (sindresorhus/log-update: it erases exactly the lines it drew last, wraps to the
// terminal's width and hides nothing else), so lines printed above it stay put.
import { createLogUpdate } from "log-update";
import type { EvaluationEvent } from "../job/evaluation.js";
import { rewardOf } from "../job/summary.js";
import { formatReward } from "./format.js";
import { printable } from "./terminal-text.js";

const PHASES: Record<string, string> = {
  agent_install: "agent install",
  environment_setup: "image build / sandbox start",
  agent_setup: "agent setup",
  agent_execution: "agent",
  verifier: "verifier",
};

interface TaskGroup {
  planned: number;
  done: number;
  failed: number;
  rewards: Array<number | null>;
}

interface Running {
  repeat: string;
  task: string;
  phase: string;
  since: number;
}

export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

export class LiveView {
  private readonly draw: ReturnType<typeof createLogUpdate>;
  private readonly groups = new Map<string, TaskGroup>();
  private readonly running = new Map<string, Running>();
  private readonly t0 = Date.now();
  private total = 0;
  private done = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(stream: NodeJS.WriteStream) {
    this.draw = createLogUpdate(stream, { showCursor: true });
  }

  /** A line that stays: the region is taken away, the line written, the region drawn again. */
  above(out: NodeJS.WritableStream, text: string): void {
    this.draw.clear();
    out.write(`${text}\n`);
    this.redraw();
  }

  onEvent(e: EvaluationEvent): void {
    switch (e.type) {
      case "plan":
        this.total = e.plan.jobs.length * e.plan.tasks.length;
        for (const { task } of e.plan.tasks)
          this.groups.set(task.name, { planned: e.plan.jobs.length, done: 0, failed: 0, rewards: [] });
        // The clock ticks between events; it never keeps the process alive.
        this.timer = setInterval(() => this.redraw(), 1000);
        this.timer.unref();
        break;
      case "rollout-start":
        this.running.set(`${e.repeat}/${e.task}`, {
          repeat: e.repeat,
          task: e.task,
          phase: "starting",
          since: Date.now(),
        });
        break;
      case "rollout-phase": {
        const r = this.running.get(`${e.repeat}/${e.task}`);
        if (r) {
          r.phase = PHASES[e.phase] ?? e.phase;
          r.since = Date.now();
        }
        break;
      }
      case "rollout-end": {
        this.running.delete(`${e.repeat}/${e.result.task_name}`);
        this.done++;
        const g = this.groups.get(e.result.task_name);
        const reward = rewardOf(e.result);
        if (g) {
          g.done++;
          g.rewards.push(reward);
          if (reward === null) g.failed++;
        }
        break;
      }
      default:
        return;
    }
    this.redraw();
  }

  /** The region taken away for good (the run's last lines come next). */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.draw.clear();
  }

  private redraw(): void {
    if (this.total === 0) return;
    this.draw(this.render());
  }

  render(now = Date.now()): string {
    const lines: string[] = [];
    for (const [task, g] of this.groups) {
      const running = [...this.running.values()].filter((r) => r.task === task);
      const scored = g.rewards.filter((r): r is number => r !== null);
      const mean = scored.length ? (scored.reduce((a, b) => a + b, 0) / scored.length).toFixed(3) : "—";
      const rewards = g.rewards.map((r) => (r === null ? "unscored" : formatReward(r))).join(" ");
      lines.push(
        `${printable(task)}  ${g.done}/${g.planned} done · ${running.length} running · ${g.failed} failed · mean ${mean}${rewards ? ` · rewards ${rewards}` : ""}`,
      );
      for (const r of running) lines.push(`  ${r.repeat}  ${r.phase} ${clock(now - r.since)}`);
    }
    const elapsed = now - this.t0;
    const eta =
      this.done > 0 && this.done < this.total ? clock((elapsed / this.done) * (this.total - this.done)) : "—";
    lines.push(`${this.done}/${this.total} rollouts · ETA ${eta} · ${clock(elapsed)} elapsed`);
    return lines.join("\n");
  }
}
