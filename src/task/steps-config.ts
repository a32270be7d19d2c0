// `[[steps]]` and `multi_step_reward_strategy` of task.toml (Harbor's multi-step tasks): each entry's
// name, timeouts, verifier env and min_reward, with Harbor's defaults. The files of each step are
// resolved by inspect-steps.ts.
import type { FieldReader } from "./config-reader.js";
import { isTable } from "./keys.js";
import type { StepConfig, TaskConfig } from "./types.js";

const STEP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function readSteps(
  r: FieldReader,
  raw: Record<string, unknown>,
  task: Pick<TaskConfig, "agent" | "verifier">,
): Pick<TaskConfig, "steps" | "multiStepRewardStrategy"> {
  const strategy = raw.multi_step_reward_strategy ?? raw.multi_step_reward_mode;
  let multiStepRewardStrategy: "mean" | "final" = "mean";
  if (strategy !== undefined) {
    if (strategy === "mean" || strategy === "final") multiStepRewardStrategy = strategy;
    else
      r.problem(
        "multi_step_reward_strategy",
        `= ${JSON.stringify(strategy)} is not known`,
        'write "mean" or "final"',
      );
  }
  const list = raw.steps;
  if (list === undefined || list === null) return { steps: [], multiStepRewardStrategy };
  if (!Array.isArray(list)) {
    r.problem("steps", "must be a list of tables", "write each step as a [[steps]] table with a name");
    return { steps: [], multiStepRewardStrategy };
  }
  const steps: StepConfig[] = [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const where = `steps[${i}]`;
    const entry = r.table(item, where);
    const name = entry.name;
    if (typeof name !== "string" || !STEP_NAME.test(name)) {
      r.problem(
        `${where}.name`,
        `must be a folder name under steps/ (got ${JSON.stringify(name)})`,
        'write name = "step-1"',
      );
      return;
    }
    if (name === "reward") {
      r.problem(
        `${where}.name`,
        '= "reward" clashes with the combined reward in result.json rewards',
        "rename the step",
      );
      return;
    }
    if (seen.has(name)) r.problem(`${where}.name`, `"${name}" is used twice`, "give each step its own name");
    seen.add(name);
    const agent = r.table(entry.agent, `${where}.agent`);
    const verifier = r.table(entry.verifier, `${where}.verifier`);
    steps.push({
      name,
      agentTimeoutSec: r.seconds(agent.timeout_sec, `${where}.agent.timeout_sec`, task.agent.timeoutSec),
      verifierTimeoutSec: r.seconds(verifier.timeout_sec, `${where}.verifier.timeout_sec`, 600) ?? 600,
      verifierEnv: { ...task.verifier.env, ...r.env(verifier.env, `${where}.verifier.env`) },
      minReward: minRewardOf(r, entry.min_reward, `${where}.min_reward`),
    });
  });
  if (steps.length === 0 && r.problems.length === 0)
    r.problem("steps", "is empty", "add a [[steps]] table for each step, or remove steps");
  return { steps, multiStepRewardStrategy };
}

function minRewardOf(r: FieldReader, value: unknown, field: string): StepConfig["minReward"] {
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (isTable(value)) {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
      else r.problem(`${field}.${k}`, `must be a number (got ${JSON.stringify(v)})`, `write ${k} = 1.0`);
    }
    return out;
  }
  r.problem(
    field,
    `must be a number or a table of key = number (got ${JSON.stringify(value)})`,
    "write min_reward = 1.0",
  );
  return null;
}
