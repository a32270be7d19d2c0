// What a rollout leaves in its folder: config.json, timing.json, prompts.json, the agent's
// trajectory, and result.json last (fsynced), whose presence marks the rollout final.
import { promises as fs } from "node:fs";
import path from "node:path";
import { ACP_TRAJECTORY, CONFIG, PROMPTS, RESULT, TIMING, TRAJECTORY_DIR } from "../jobs-dir/layout.js";
import { type AgentErrorCategory, type OutcomeCategory, outcomeOf } from "../schemas/outcome.js";
import type { RolloutResult, WrittenRolloutResult, WrittenTiming } from "../schemas/result.js";
import type { WrittenRolloutConfig } from "../schemas/rollout-config.js";
import { promptOf } from "../task/types.js";
import { writeFileAtomic, writeJsonAtomic } from "../util/fs.js";
import type { RolloutState } from "./run.js";
import type { RolloutPlan } from "./types.js";

/** Upstream writes rewards as floats (`1.0`); so do we, so a 0/1 reward column loads as float. */
const RESULT_FLOATS: ReadonlySet<string> = new Set(["rewards"]);

export async function recordRollout(
  plan: RolloutPlan,
  state: RolloutState,
  rolloutDir: string,
  startedAt: Date,
): Promise<RolloutResult> {
  let result: RolloutResult = resultOf(plan, state, startedAt);
  if (plan.hooks?.finalize) result = await plan.hooks.finalize(result);
  const trajectory = state.events.map((e) => JSON.stringify(e)).join("\n");
  await fs.mkdir(path.join(rolloutDir, TRAJECTORY_DIR), { recursive: true });
  await Promise.all([
    ...(state.sandboxDetails ? [writeConfig(plan, rolloutDir, startedAt, state.sandboxDetails)] : []),
    writeJsonAtomic(path.join(rolloutDir, TIMING), state.timing),
    writeJsonAtomic(path.join(rolloutDir, PROMPTS), state.prompts ?? [promptOf(plan.task)]),
    writeFileAtomic(path.join(rolloutDir, ACP_TRAJECTORY), trajectory ? `${trajectory}\n` : ""),
  ]);
  await writeJsonAtomic(path.join(rolloutDir, RESULT), result, { durable: true, floats: RESULT_FLOATS });
  return result;
}

export function resultOf(plan: RolloutPlan, state: RolloutState, startedAt: Date): WrittenRolloutResult {
  const v = state.verifier;
  // The trial records agent-side categories here (verifier ones come from the verifier).
  const errorCategory = (state.error?.category ?? null) as AgentErrorCategory | null;
  const verifierErrorCategory = v?.error?.category ?? null;
  const nToolCalls = state.agentResult?.nToolCalls ?? 0;
  const nPrompts = state.prompts?.length ?? 1;
  return {
    task_name: plan.task.name,
    rollout_name: plan.rolloutName,
    agent: plan.agent.name,
    agent_name: plan.agent.name,
    model: plan.model,
    rewards: v?.rewards ?? null,
    reward_rule: v?.rewards ? v.rule : null,
    ...(state.stepResults ? { step_results: state.stepResults } : {}),
    n_tool_calls: nToolCalls,
    ...(state.agentResult?.nSkillInvocations !== undefined
      ? { n_skill_invocations: state.agentResult.nSkillInvocations }
      : {}),
    n_prompts: nPrompts,
    agent_result: { n_tool_calls: nToolCalls, n_prompts: nPrompts },
    error: state.error?.message ?? null,
    error_category: errorCategory,
    verifier_error: v?.error?.message ?? null,
    verifier_error_category: verifierErrorCategory,
    outcome: outcomeOf(errorCategory, verifierErrorCategory) as OutcomeCategory | null,
    test_last_line: v?.lastLine ?? null,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    timing: state.timing as WrittenTiming,
    task_digest: plan.taskDigest,
    sandbox: plan.backend.kind,
    sandbox_id: state.sandbox?.id ?? null,
    trajectory_source: state.agentResult?.trajectorySource ?? null,
    partial_trajectory: false,
    job_name: plan.jobName,
    trial: plan.repeatLabel,
    attempt: plan.attempt,
    replaces: plan.replaces,
  };
}

/** config.json: written when the rollout starts, and again at the end with what the sandbox turned out to be. */
export function writeConfig(
  plan: RolloutPlan,
  rolloutDir: string,
  startedAt: Date,
  sandboxDetails?: Record<string, unknown>,
): Promise<void> {
  return writeJsonAtomic(path.join(rolloutDir, CONFIG), { ...configOf(plan, startedAt), ...sandboxDetails });
}

function configOf(plan: RolloutPlan, startedAt: Date): WrittenRolloutConfig {
  const own = {
    task_name: plan.task.name,
    task_path: plan.task.dir,
    task_digest: plan.taskDigest,
    agent: plan.agent.name,
    model: plan.model,
    job_name: plan.jobName,
    trial: plan.repeatLabel,
    rollout_name: plan.rolloutName,
    attempt: plan.attempt,
    timeout_sec: plan.task.config.agent.timeoutSec,
    verifier_timeout_sec: plan.task.config.verifier.timeoutSec,
    network_mode: plan.task.config.sandbox.networkMode,
    verifier_environment_mode: plan.task.config.verifier.environmentMode ?? "shared",
    agent_env: Object.keys(plan.agentEnv).sort(),
    started_at: startedAt.toISOString(),
  } satisfies Partial<WrittenRolloutConfig>;
  // The job's settings (job/plan.ts) are checked against the schema by test/seam-schemas.test.ts.
  return { ...own, ...plan.settings } as WrittenRolloutConfig;
}
