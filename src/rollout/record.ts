// What a rollout leaves in its folder: config.json, timing.json, prompts.json, the agent's
// trajectory, and result.json last (fsynced), whose presence marks the rollout final. result.json is
// assembled here and only here: from the rollout's state (resultOf), or, on the SLURM host, from what
// a node wrote (completeResult); writeResult is its one writer.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { RolloutUsage } from "../gateway/index.js";
import { ACP_TRAJECTORY, CONFIG, PROMPTS, RESULT, TIMING, TRAJECTORY_DIR } from "../jobs-dir/layout.js";
import { type AttributionFacts, attributionOf } from "../schemas/attribution.js";
import { type AgentErrorCategory, type OutcomeCategory, outcomeOf } from "../schemas/outcome.js";
import type {
  RolloutExecutor,
  RolloutResult,
  WrittenRolloutResult,
  WrittenTiming,
} from "../schemas/result.js";
import type { WrittenRolloutConfig } from "../schemas/rollout-config.js";
import { promptOf } from "../task/types.js";
import { writeFileAtomic, writeJsonAtomic } from "../util/fs.js";
import type { RolloutState } from "./state.js";
import { type RolloutPlan, rolloutDirOf } from "./types.js";

/** Upstream writes rewards as floats (`1.0`); so do we, so a 0/1 reward column loads as float. */
const RESULT_FLOATS: ReadonlySet<string> = new Set(["rewards"]);

/** The one writer of result.json: atomic and durable, after every other file of the rollout. */
export async function writeResult(file: string, result: RolloutResult): Promise<void> {
  await writeJsonAtomic(file, result, { durable: true, floats: RESULT_FLOATS });
}

/** The rollout's files, result.json last; the gateway's usage of the rollout goes into its result. */
export async function recordRollout(
  plan: RolloutPlan,
  state: RolloutState,
  startedAt: Date,
): Promise<WrittenRolloutResult> {
  const rolloutDir = rolloutDirOf(plan);
  const usage = (await plan.hooks?.modelUsage?.()) ?? null;
  const result = resultOf(plan, state, startedAt, usage);
  const trajectory = state.events.map((e) => JSON.stringify(e)).join("\n");
  await fs.mkdir(path.join(rolloutDir, TRAJECTORY_DIR), { recursive: true });
  await Promise.all([
    ...(state.sandboxDetails ? [writeConfig(plan, startedAt, state.sandboxDetails)] : []),
    writeJsonAtomic(path.join(rolloutDir, TIMING), state.timing),
    writeJsonAtomic(path.join(rolloutDir, PROMPTS), state.prompts ?? [promptOf(plan.task)]),
    writeFileAtomic(path.join(rolloutDir, ACP_TRAJECTORY), trajectory ? `${trajectory}\n` : ""),
  ]);
  await writeResult(plan.resultFile ?? path.join(rolloutDir, RESULT), result);
  return result;
}

/** How the agent phase ended, from the state, unless the run's signal reached the rollout itself. */
function endingOf(plan: RolloutPlan, state: RolloutState): RolloutState["error"] {
  // SLURM signals every process of the job at once: the verifier may die of it (rc 143) before this
  // process hears it, which would read as the task's own verifier failing. A signalled rollout is
  // interrupted, whatever its phases saw; the host decides from SLURM's end what it was.
  if (!plan.signalReachesSandbox || !plan.signal.aborted || state.error?.category === "interrupted")
    return state.error;
  const then = state.error?.message;
  return {
    category: "interrupted",
    message: `SLURM signalled the trial while it ran (scancel, preemption or its time limit)${then ? `; then: ${then}` : ""}`,
  };
}

export function resultOf(
  plan: RolloutPlan,
  state: RolloutState,
  startedAt: Date,
  usage: RolloutUsage | null = null,
): WrittenRolloutResult {
  const ending = endingOf(plan, state);
  const interrupted = ending !== state.error;
  const v = state.verifier;
  // The rollout records agent-side categories here (verifier ones come from the verifier).
  const errorCategory = (ending?.category ?? null) as AgentErrorCategory | null;
  const verifierErrorCategory = v?.error?.category ?? null;
  const nToolCalls = state.agentResult?.nToolCalls ?? 0;
  const nPrompts = state.prompts?.length ?? 1;
  const base: WrittenRolloutResult = {
    task_name: plan.task.name,
    rollout_name: plan.rolloutName,
    agent: plan.run.agent.name,
    agent_name: plan.run.agent.name,
    model: plan.run.model,
    rewards: interrupted ? null : (v?.rewards ?? null),
    reward_rule: v?.rewards ? v.rule : null,
    ...(state.stepResults ? { step_results: state.stepResults } : {}),
    n_tool_calls: nToolCalls,
    ...(state.agentResult?.nSkillInvocations !== undefined
      ? { n_skill_invocations: state.agentResult.nSkillInvocations }
      : {}),
    n_prompts: nPrompts,
    agent_result: { n_tool_calls: nToolCalls, n_prompts: nPrompts },
    error: ending?.message ?? null,
    error_category: errorCategory,
    verifier_error: v?.error?.message ?? null,
    verifier_error_category: verifierErrorCategory,
    outcome: outcomeOf(errorCategory, verifierErrorCategory) as OutcomeCategory | null,
    ...attributionFields(plan, state, {
      errorCategory,
      verifierErrorCategory,
      hasReward: !interrupted && !!v?.rewards && !v.error,
      usage,
    }),
    test_last_line: v?.lastLine ?? null,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    timing: state.timing as WrittenTiming,
    task_digest: plan.taskDigest,
    sandbox: plan.run.backend.kind,
    sandbox_id: state.sandbox?.id ?? null,
    trajectory_source: state.agentResult?.trajectorySource ?? null,
    partial_trajectory: false,
    job_name: plan.run.jobName,
    trial: plan.job.repeat,
    attempt: plan.attempt,
    replaces: plan.replaces,
    group_identity: {
      ...plan.run.groupIdentity,
      task: plan.task.name,
      task_digest: plan.taskDigest,
    },
  };
  return completeResult(base, {
    usage,
    executor: plan.executor ?? null,
    usesModel: plan.run.agent.usesModel,
  }) as WrittenRolloutResult;
}

/** Score or mask (schemas/attribution.ts), with the verifier's rerun and verdict when there were any. */
function attributionFields(
  plan: RolloutPlan,
  state: RolloutState,
  facts: Pick<AttributionFacts, "errorCategory" | "verifierErrorCategory" | "hasReward"> & {
    usage: RolloutUsage | null;
  },
): Pick<WrittenRolloutResult, "attribution" | "attribution_reason" | "verifier_rerun" | "verifier_verdict"> {
  const { attribution, reason } = attributionOf({
    ...facts,
    policyActed: state.reached !== undefined && policyAnswered(plan.run.agent.usesModel, facts.usage),
    verifierInfra: state.verifierInfra === true,
    verifierVerdict: state.verifierVerdict ?? null,
  });
  return {
    attribution,
    attribution_reason: reason,
    ...(state.verifierRerun ? { verifier_rerun: state.verifierRerun } : {}),
    ...(state.verifierVerdict ? { verifier_verdict: state.verifierVerdict } : {}),
  };
}

/**
 * Whether the policy answered at least once: an agent that calls a model has acted only through it.
 * Unknown usage (a SLURM node; the host knows) counts as answered, and the host's usage corrects it.
 */
function policyAnswered(usesModel: boolean, usage: RolloutUsage | null): boolean {
  return !usesModel || usage === null || usage.calls > usage.failedCalls;
}

/**
 * A result scored for a failure "after the policy acted" whose model, the host's usage shows, never
 * answered: the failure says nothing of the policy, so it is masked as the same failure before acting.
 */
function unactedAttribution(result: RolloutResult, usage: RolloutUsage): Partial<WrittenRolloutResult> {
  const reason = result.attribution_reason;
  if (result.attribution !== "score" || policyAnswered(true, usage)) return {};
  if (reason === "run_error") return { attribution: "mask", attribution_reason: "infrastructure" };
  if (reason === "verifier_error") {
    const infra = result.error_category === "infra_error";
    return { attribution: "mask", attribution_reason: infra ? "verifier_infra" : "verifier_crash_clean_run" };
  }
  return {};
}

/**
 * What only the host knows, added to a result: the gateway's usage of the rollout's model calls, and
 * where it ran; `failure`, when SLURM ended the job before the rollout finished, makes it that
 * infrastructure failure (unscored) whatever the node wrote.
 */
export function completeResult(
  result: RolloutResult,
  extra: {
    usage: RolloutUsage | null;
    executor: RolloutExecutor | null;
    failure?: { category: AgentErrorCategory; message: string };
    /** The rollout's agent calls a model (its usage says whether the policy acted). */
    usesModel?: boolean;
  },
): RolloutResult {
  const { usage, executor, failure } = extra;
  return {
    ...result,
    ...(usage && extra.usesModel ? unactedAttribution(result, usage) : {}),
    ...(failure
      ? {
          rewards: null,
          error: failure.message,
          error_category: failure.category,
          outcome: outcomeOf(failure.category, result.verifier_error_category),
          // SLURM ended the job: not the policy's doing, whatever it had done.
          attribution: "mask",
          attribution_reason: failure.category === "interrupted" ? "interrupted" : "infrastructure",
        }
      : {}),
    ...(usage ? usageFields(result, usage) : {}),
    ...(executor ? { executor: { ...executor } } : {}),
  };
}

/** result.json's fields of the gateway's count: tokens, cost, calls, the policy versions they name. */
function usageFields(result: RolloutResult, u: RolloutUsage): Partial<WrittenRolloutResult> {
  const versions = u.policyVersions;
  return {
    agent_result: {
      n_tool_calls: result.agent_result?.n_tool_calls ?? result.n_tool_calls,
      n_prompts: result.agent_result?.n_prompts ?? result.n_prompts,
      ...result.agent_result,
      n_input_tokens: u.inputTokens,
      n_output_tokens: u.outputTokens,
      n_cache_read_tokens: u.cacheReadTokens,
      n_cache_creation_tokens: u.cacheWriteTokens,
      total_tokens: u.inputTokens + u.outputTokens,
      cost_usd: u.costUsd,
      price_source: u.priceSource,
      usage_source: u.calls > 0 ? "provider_response" : "unavailable",
      n_model_calls: u.calls,
      n_failed_model_calls: u.failedCalls,
    },
    n_model_calls: u.calls,
    n_failed_model_calls: u.failedCalls,
    policy_version: versions.length === 1 ? (versions[0] ?? null) : null,
    policy_versions: versions,
    gateway_integrity: {
      dropped_fields: { ...u.droppedFields },
      refused_calls: { ...u.refusedCalls },
      recorded_bytes: u.recordedBytes,
      calls_by_origin: { ...u.callsByOrigin },
      ...(u.policyVersionMismatches > 0 ? { policy_version_mismatches: u.policyVersionMismatches } : {}),
    },
  };
}

/** config.json: written when the rollout starts, and again at the end with what the sandbox turned out to be. */
export function writeConfig(
  plan: RolloutPlan,
  startedAt: Date,
  sandboxDetails?: Record<string, unknown>,
): Promise<void> {
  return writeJsonAtomic(path.join(rolloutDirOf(plan), CONFIG), {
    ...configOf(plan, startedAt),
    ...sandboxDetails,
  });
}

function configOf(plan: RolloutPlan, startedAt: Date): WrittenRolloutConfig {
  const { task, run } = plan;
  const own = {
    task_name: task.name,
    task_path: task.dir,
    task_digest: plan.taskDigest,
    agent: run.agent.name,
    model: run.model,
    job_name: run.jobName,
    trial: plan.job.repeat,
    rollout_name: plan.rolloutName,
    attempt: plan.attempt,
    timeout_sec: task.config.agent.timeoutSec,
    verifier_timeout_sec: task.config.verifier.timeoutSec,
    network_mode: task.config.sandbox.networkMode,
    verifier_environment_mode: task.config.verifier.environmentMode ?? "shared",
    agent_env: Object.keys(run.agentEnv).sort(),
    started_at: startedAt.toISOString(),
  } satisfies Partial<WrittenRolloutConfig>;
  // The run's record (job/plan.ts) is checked against the schema by test/seam-schemas.test.ts.
  return { ...own, ...run.record } as WrittenRolloutConfig;
}
