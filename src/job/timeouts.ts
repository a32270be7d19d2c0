// Harbor's run-level timeout multipliers (`--timeout-multiplier` and one per phase): a slow machine
// or a slow policy gets more time without editing every task. Each phase's limit is the task's
// value times the phase's multiplier, else the general one; "no limit" stays no limit.
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import type { Task } from "../task/types.js";

export interface TimeoutMultipliers {
  /** Every phase, unless the phase has its own. */
  all?: number | null;
  agent?: number | null;
  verifier?: number | null;
  /** The image build (the task's build_timeout_sec). */
  build?: number | null;
}

/** The options of timeoutMultipliers, for the check of unknown keys. */
export const MULTIPLIERS: Record<keyof TimeoutMultipliers, true> = {
  all: true,
  agent: true,
  verifier: true,
  build: true,
};

/** The multipliers in force, checked; null when none is set (nothing to scale or record). */
export function resolveMultipliers(m: TimeoutMultipliers | undefined): Required<TimeoutMultipliers> | null {
  if (!m) return null;
  for (const [key, value] of Object.entries(m) as [keyof TimeoutMultipliers, number | null | undefined][]) {
    if (value != null && !(Number.isFinite(value) && value > 0)) {
      const name = opt(`timeoutMultipliers.${key}`);
      throw new UserInputError(`${name} must be a number greater than 0; got ${value}`);
    }
  }
  const all = m.all ?? null;
  const out = { all, agent: m.agent ?? all, verifier: m.verifier ?? all, build: m.build ?? all };
  return Object.values(out).every((v) => v == null || v === 1) ? null : out;
}

/** A copy of the task with its limits scaled. */
export function scaleTimeouts(task: Task, m: Required<TimeoutMultipliers>): Task {
  const scale = (sec: number, by: number | null) => (by == null ? sec : Math.max(1, Math.round(sec * by)));
  const { config } = task;
  return {
    ...task,
    config: {
      ...config,
      agent: {
        ...config.agent,
        timeoutSec: config.agent.timeoutSec == null ? null : scale(config.agent.timeoutSec, m.agent),
      },
      verifier: { ...config.verifier, timeoutSec: scale(config.verifier.timeoutSec, m.verifier) },
      sandbox: { ...config.sandbox, buildTimeoutSec: scale(config.sandbox.buildTimeoutSec, m.build) },
    },
    ...(task.steps
      ? {
          steps: task.steps.map((step) => ({
            ...step,
            agentTimeoutSec: step.agentTimeoutSec == null ? null : scale(step.agentTimeoutSec, m.agent),
            verifierTimeoutSec: scale(step.verifierTimeoutSec, m.verifier),
          })),
        }
      : {}),
  };
}
