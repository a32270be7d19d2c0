// `[environment.healthcheck]` (Harbor's and upstream's): a shell command run in the sandbox after it
// starts and before the agent is set up; the defaults are theirs.
import type { FieldReader } from "./config-reader.js";
import { isTable } from "./keys.js";

export interface TaskHealthcheck {
  command: string;
  intervalSec: number;
  timeoutSec: number;
  startPeriodSec: number;
  startIntervalSec: number;
  retries: number;
}

const DEFAULTS = { interval_sec: 5, timeout_sec: 30, start_period_sec: 0, start_interval_sec: 5, retries: 3 };

export function readHealthcheck(r: FieldReader, value: unknown, field: string): TaskHealthcheck | null {
  if (value === undefined || value === null) return null;
  if (!isTable(value) || typeof value.command !== "string" || value.command.trim() === "") {
    r.problem(
      `${field}.command`,
      "must be a shell command",
      `write ${field} = { command = "test -f /ready" }`,
    );
    return null;
  }
  const number = (key: keyof typeof DEFAULTS, min: number): number => {
    const v = value[key] ?? DEFAULTS[key];
    if (typeof v !== "number" || !Number.isFinite(v) || v < min) {
      r.problem(
        `${field}.${key}`,
        `must be a number >= ${min} (got ${JSON.stringify(v)})`,
        `write ${key} = ${DEFAULTS[key]}`,
      );
      return DEFAULTS[key];
    }
    return v;
  };
  const retries = number("retries", 1);
  return {
    command: value.command,
    intervalSec: number("interval_sec", 0),
    timeoutSec: number("timeout_sec", 0.001),
    startPeriodSec: number("start_period_sec", 0),
    startIntervalSec: number("start_interval_sec", 0),
    retries: Math.floor(retries),
  };
}
