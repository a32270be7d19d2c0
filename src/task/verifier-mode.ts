// `[verifier] environment_mode` (Harbor's key; upstream BenchFlow spells it `sandbox_mode`): whether
// the test runs in the agent's sandbox ("shared", the default) or in a fresh one made from the
// task's image that receives only the workspace and the artifacts ("separate", rollout/separate-verifier.ts).
// Harbor's own image for the verifier (`[verifier.environment]`) is not supported yet, nor a step's
// own mode: both are refused here, never run shared in silence. A multi-step task's mode holds for
// every step.
import type { FieldReader } from "./config-reader.js";
import { show } from "./config-reader.js";
import { isTable } from "./keys.js";

export const VERIFIER_ENVIRONMENT_MODES = ["shared", "separate"] as const;
export type VerifierEnvironmentMode = (typeof VERIFIER_ENVIRONMENT_MODES)[number];

/** Where the task's verifier runs (the run flag is already applied to the task, job/verifier-mode.ts). */
export function verifierModeOf(task: {
  // What it reads of a Task, spelled out: types.ts reads this file for the mode's type.
  config: { verifier: { environmentMode?: VerifierEnvironmentMode | null } };
}): VerifierEnvironmentMode {
  return task.config.verifier.environmentMode ?? "shared";
}

/** The mode a task's config asks for; absent when it names none (the run flag, else "shared", decides). */
export function readVerifierMode(
  r: FieldReader,
  verifier: Record<string, unknown>,
  raw: Record<string, unknown>,
): { environmentMode?: VerifierEnvironmentMode } {
  const modeKey = pick(r, verifier, "environment_mode", "sandbox_mode");
  const envKey = pick(r, verifier, "environment", "sandbox");
  let mode: VerifierEnvironmentMode | null = null;
  if (modeKey) {
    const value = verifier[modeKey];
    if (typeof value === "string" && (VERIFIER_ENVIRONMENT_MODES as readonly string[]).includes(value)) {
      mode = value as VerifierEnvironmentMode;
    } else {
      r.problem(
        `verifier.${modeKey}`,
        `= ${show(value)} is not known`,
        'write environment_mode = "shared" (the verifier runs in the agent\'s sandbox) or "separate" (a fresh sandbox that receives only the workspace and the artifacts)',
      );
    }
  }
  if (envKey && isPresent(verifier[envKey])) {
    if (mode === "shared") {
      // Harbor's own check: an environment of its own contradicts sharing the agent's.
      r.problem(
        `verifier.${envKey}`,
        `contradicts verifier.${modeKey} = "shared"`,
        `either drop [verifier.${envKey}] or set environment_mode = "separate"`,
      );
    } else {
      r.problem(
        `[verifier.${envKey}]`,
        "(an image of its own for the verifier) is not supported yet",
        'drop it: environment_mode = "separate" alone runs the verifier in a fresh sandbox made from the task\'s own image',
      );
    }
  }
  if (Array.isArray(raw.steps) && raw.steps.length > 0) checkSteps(r, raw.steps, mode);
  return mode ? { environmentMode: mode } : {};
}

/** Every step's verifier runs where the task's does: a step may repeat the task's mode, not change it. */
function checkSteps(r: FieldReader, steps: unknown[], mode: VerifierEnvironmentMode | null): void {
  const taskMode = mode ?? "shared";
  steps.forEach((step, i) => {
    const verifier = isTable(step) && isTable(step.verifier) ? step.verifier : null;
    if (!verifier) return;
    const own = verifier.environment_mode;
    if (own !== undefined && own !== taskMode) {
      r.problem(
        `steps[${i}].verifier.environment_mode`,
        `= ${show(own)} differs from the task's ("${taskMode}"), and a step's own mode is not supported yet`,
        "set environment_mode once, in [verifier], for every step",
      );
    }
    if (isPresent(verifier.environment)) {
      r.problem(
        `[steps.verifier.environment] of steps[${i}]`,
        "(an image of its own for the step's verifier) is not supported yet",
        "drop it: [verifier] environment_mode = \"separate\" runs each step's verifier in a fresh sandbox from the task's image",
      );
    }
  });
}

/** Which of a key and its upstream spelling is set; both set is a problem. */
function pick(r: FieldReader, table: Record<string, unknown>, key: string, alias: string): string | null {
  const has = (k: string) => table[k] !== undefined && table[k] !== null;
  if (has(key) && has(alias)) {
    r.problem(
      `verifier.${alias}`,
      `and verifier.${key} are both set (${alias} is upstream's spelling)`,
      `keep only ${key}`,
    );
  }
  return has(key) ? key : has(alias) ? alias : null;
}

function isPresent(v: unknown): boolean {
  return v !== undefined && v !== null && !(isTable(v) && Object.keys(v).length === 0);
}
