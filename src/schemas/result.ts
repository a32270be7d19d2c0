// The files of one rollout folder and of one job folder. Field names follow upstream BenchFlow
// so users (and upstream's readers) can move between the two; `.loose()` keeps fields we do not
// know, because job folders written by upstream carry more. Each read form has a `Written` form
// beside it: what we write, exactly (unknown keys refused, categories from outcome.ts); the
// published JSON Schemas (schemas/*.json) are generated from the written forms.

import { z } from "zod";
import { Attribution, AttributionReason, VerifierVerdict } from "./attribution.js";
import { GroupIdentity, GroupSampling } from "./group-identity.js";
import { AgentErrorCategory, VerifierErrorCategory } from "./outcome.js";

export const Rewards = z.object({ reward: z.number() }).catchall(z.unknown());
/** What we write: every key of the task's reward.json, each a finite number, and the scalar `reward`. */
export const WrittenRewards = z.object({ reward: z.number() }).catchall(z.number());

/** Which rule made the scalar `reward` (verifier/reward.ts; the two multi-step ones in rollout/steps.ts). */
export const RewardRule = z.enum([
  "reward_key",
  "reward_txt",
  "aggregate",
  "mean_of_keys",
  "multi_step_mean",
  "multi_step_final",
]);

/** One step of a multi-step rollout (Harbor's `step_results` entry, in our words). */
export const WrittenStepResult = z.strictObject({
  step_name: z.string(),
  rewards: WrittenRewards.nullable(),
  reward_rule: RewardRule.nullable(),
  error: z.string().nullable(),
  error_category: AgentErrorCategory.nullable(),
  verifier_error: z.string().nullable(),
  verifier_error_category: VerifierErrorCategory.nullable(),
  test_last_line: z.string().nullable(),
  /** Set on the step after which the rollout stopped early, and why. */
  stopped_after: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string(),
  timing: z
    .strictObject({
      setup: z.number(),
      agent_execution: z.number(),
      /** A separate verifier: the step's output into a fresh sandbox (part of `verifier` here). */
      verifier_environment_setup: z.number(),
      verifier: z.number(),
    })
    .partial(),
});
export type WrittenStepResult = z.infer<typeof WrittenStepResult>;

export const TimingInfo = z
  .object({
    environment_setup: z.number().nullable(),
    agent_setup: z.number().nullable(),
    agent_execution: z.number().nullable(),
    verifier: z.number().nullable(),
    total: z.number().nullable(),
  })
  .partial()
  .loose();
export type TimingInfo = z.infer<typeof TimingInfo>;

export const AgentResult = z
  .object({
    n_tool_calls: z.number(),
    n_prompts: z.number(),
    n_input_tokens: z.number().nullable(),
    n_output_tokens: z.number().nullable(),
    n_cache_read_tokens: z.number().nullable(),
    total_tokens: z.number().nullable(),
    cost_usd: z.number().nullable(),
    usage_source: z.string(),
  })
  .partial()
  .loose();
export type AgentResult = z.infer<typeof AgentResult>;

/** `result.json`: written last, atomically; its presence means the rollout is final. */
export const RolloutResult = z
  .object({
    task_name: z.string(),
    rollout_name: z.string(),
    agent: z.string(),
    agent_name: z.string().optional(),
    model: z.string().nullable(),
    /** null means unscored: never read it as 0. */
    rewards: Rewards.nullable(),
    n_tool_calls: z.number().default(0),
    n_prompts: z.number().default(0),
    agent_result: AgentResult.optional(),
    error: z.string().nullable().default(null),
    error_category: z.string().nullable().default(null),
    verifier_error: z.string().nullable().default(null),
    verifier_error_category: z.string().nullable().default(null),
    /** The one outcome category (see outcome.ts), or null when the rollout ended cleanly. */
    outcome: z.string().nullable().optional(),
    /** Whether a trainer learns from it (score) or masks it, and why (attribution.ts). */
    attribution: z.string().nullable().optional(),
    attribution_reason: z.string().nullable().optional(),
    verifier_verdict: z.string().nullable().optional(),
    verifier_rerun: z.object({ reward: z.number().nullable() }).loose().nullable().optional(),
    started_at: z.string().nullable().optional(),
    finished_at: z.string().nullable().optional(),
    timing: TimingInfo.optional(),
    task_digest: z.string().nullable().optional(),
    sandbox_id: z.string().nullable().optional(),
    sandbox: z.string().nullable().optional(),
    trajectory_source: z.string().nullable().optional(),
    partial_trajectory: z.boolean().optional(),
    /** Our additions: which job and repeat this is, and retry bookkeeping. */
    job_name: z.string().optional(),
    trial: z.string().optional(),
    attempt: z.number().optional(),
    replaces: z.string().nullable().optional(),
    executor: z.lazy(() => RolloutExecutor).optional(),
  })
  .loose();
export type RolloutResult = z.infer<typeof RolloutResult>;

/** Where a rollout ran: absent for the local executor; `--executor slurm` records its node and job. */
export const RolloutExecutor = z.strictObject({
  kind: z.enum(["local", "slurm"]),
  node: z.string().nullable(),
  slurm_job_id: z.string().nullable(),
});
export type RolloutExecutor = z.infer<typeof RolloutExecutor>;

/** timing.json (and result.json `timing`): seconds per phase, as rollout/run.ts and the agents record them. */
export const WrittenTiming = z
  .strictObject({
    agent_install: z.number(),
    agent_first_install: z.number(),
    environment_setup: z.number(),
    agent_setup: z.number(),
    agent_start: z.number(),
    agent_execution: z.number(),
    /** A separate verifier (rollout/separate-verifier.ts): the agent's output out, a fresh sandbox, the output in. */
    verifier_environment_setup: z.number(),
    verifier: z.number(),
    total: z.number(),
  })
  .partial()
  .meta({ title: "benchflow rollout timing.json" });
export type WrittenTiming = z.infer<typeof WrittenTiming>;

export const WrittenAgentResult = z.strictObject({
  n_tool_calls: z.number().int(),
  n_prompts: z.number().int(),
  // Added by the gateway's usage when the agent calls a model (job/model-access.ts).
  n_input_tokens: z.number().nullable().optional(),
  n_output_tokens: z.number().nullable().optional(),
  // Upstream's names: of n_input_tokens, read from and written to the provider's prompt cache.
  n_cache_read_tokens: z.number().nullable().optional(),
  n_cache_creation_tokens: z.number().nullable().optional(),
  total_tokens: z.number().nullable().optional(),
  cost_usd: z.number().nullable().optional(),
  price_source: z
    .string()
    .nullable()
    .optional()
    .describe(
      'where cost_usd\'s prices came from: "--price", "table: <source>, <date>", or null (none known)',
    ),
  usage_source: z.enum(["provider_response", "unavailable"]).optional(),
  n_model_calls: z.number().int().optional(),
  n_failed_model_calls: z.number().int().optional(),
});

/** The verifier's second run, on a fresh copy of the workspace (<rollout>/verifier-rerun/). */
export const VerifierRerun = z.strictObject({
  reward: z.number().nullable(),
  verifier_error_category: VerifierErrorCategory.nullable(),
  verifier_error: z.string().nullable(),
});
export type VerifierRerun = z.infer<typeof VerifierRerun>;

/** `result.json` as rollout/record.ts and job/model-access.ts write it. */
export const WrittenRolloutResult = z
  .strictObject({
    task_name: z.string(),
    rollout_name: z.string(),
    agent: z.string(),
    agent_name: z.string(),
    model: z.string().nullable(),
    /** Every key of the task's reward.json and the scalar `reward`; a multi-step task adds one key per step. */
    rewards: WrittenRewards.nullable(),
    /** Which rule made `rewards.reward`; null when unscored. */
    reward_rule: RewardRule.nullable(),
    /** Only for a multi-step task: its steps in the order they ran. */
    step_results: z.array(WrittenStepResult).optional(),
    n_tool_calls: z.number().int(),
    n_skill_invocations: z.number().int().optional(),
    n_prompts: z.number().int(),
    agent_result: WrittenAgentResult,
    error: z.string().nullable(),
    error_category: AgentErrorCategory.nullable(),
    verifier_error: z.string().nullable(),
    verifier_error_category: VerifierErrorCategory.nullable(),
    outcome: z.union([AgentErrorCategory, VerifierErrorCategory]).nullable(),
    /** score: a trainer learns from it (0 when the verifier gave nothing); mask: it says nothing of the policy. */
    attribution: Attribution,
    attribution_reason: AttributionReason,
    /** The verifier failed and was run once more on a fresh copy of the agent's final workspace. */
    verifier_rerun: VerifierRerun.optional(),
    /** What the task's controls said of its verifier, asked when the verifier failed after the policy acted. */
    verifier_verdict: VerifierVerdict.optional(),
    test_last_line: z.string().nullable(),
    started_at: z.string(),
    finished_at: z.string(),
    timing: WrittenTiming,
    task_digest: z.string().nullable(),
    sandbox: z.string(),
    sandbox_id: z.string().nullable(),
    trajectory_source: z.string().nullable(),
    partial_trajectory: z.boolean(),
    job_name: z.string(),
    trial: z.string(),
    attempt: z.number().int(),
    replaces: z.string().nullable(),
    /** The facts its default group is keyed on (schemas/group-identity.ts). */
    group_identity: GroupIdentity,
    // The model calls of the rollout (job/model-access.ts), when the agent calls a model.
    n_model_calls: z.number().int().optional(),
    n_failed_model_calls: z.number().int().optional(),
    policy_version: z.string().nullable().optional(),
    policy_versions: z.array(z.string()).optional(),
    gateway_integrity: z.lazy(() => GatewayIntegrity).optional(),
    // Where the rollout ran (--executor slurm); absent for the local executor.
    executor: z.lazy(() => RolloutExecutor).optional(),
  })
  .meta({ title: "benchflow rollout result.json" });
export type WrittenRolloutResult = z.infer<typeof WrittenRolloutResult>;

/** What the gateway kept from the policy server on the rollout's behalf (gateway/forwarded.ts). */
export const GatewayIntegrity = z.strictObject({
  dropped_fields: z
    .record(z.string(), z.number().int())
    .describe(
      "request fields the agent sent that were not forwarded to the policy server (n, logit_bias, guided decoding, ...), with how many calls sent each",
    ),
  refused_calls: z
    .partialRecord(z.enum(["request", "answer", "recorded"]), z.number().int())
    .optional()
    .describe(
      "calls refused for going over a bound, by which: request (over the per-call cap), answer (the policy server's answer over it), recorded (the rollout's trajectory at its cap)",
    ),
  recorded_bytes: z.number().int().optional().describe("bytes of the rollout's llm_trajectory.jsonl"),
  calls_by_origin: z
    .partialRecord(z.enum(["agent", "other", "unattributed"]), z.number().int())
    .optional()
    .describe(
      "the rollout's calls by who made them: agent, other (a process that is not the agent: left out of rows), unattributed (no trusted relay)",
    ),
  policy_version_mismatches: z
    .number()
    .int()
    .optional()
    .describe(
      "calls whose policy server reported (x-policy-version, x-model-version or x-weights-version) another version than the run's --policy-version; their rollout's tokens rows are masked",
    ),
});

/** `replaced.json`: beside an attempt that a retry or a resume replaced. Such an attempt is in no group. */
export const ReplacedMarker = z
  .object({
    replaced_by: z.string(),
    reason: z.enum(["retried", "interrupted", "resumed"]),
    at: z.string(),
  })
  .loose();
export type ReplacedMarker = z.infer<typeof ReplacedMarker>;
export const WrittenReplacedMarker = z.strictObject(ReplacedMarker.shape);

/** `evaluation.json`: the plan of one job, written before it starts. */
export const EvaluationPlan = z
  .object({
    schema_version: z.literal(1),
    job_name: z.string(),
    trial: z.string(),
    trial_index: z.number(),
    trials_total: z.number(),
    tasks_dir: z.string(),
    tasks: z.array(z.object({ name: z.string(), path: z.string(), digest: z.string() }).loose()),
    agent: z.string(),
    model: z.string().nullable(),
    sandbox: z.string(),
    concurrency: z.number(),
    retry_attempts: z.number(),
    /** Names only: values may be secrets. */
    agent_env_keys: z.array(z.string()).default([]),
    created_at: z.string(),
    /** The group identity a resume must keep (older plans lack them: not checked then). */
    policy_version: z.string().nullable().optional(),
    sampling: GroupSampling.optional(),
  })
  .loose();
export type EvaluationPlan = z.infer<typeof EvaluationPlan>;
export const WrittenEvaluationPlan = z.strictObject({
  ...EvaluationPlan.shape,
  tasks: z.array(z.strictObject({ name: z.string(), path: z.string(), digest: z.string() })),
  agent_env_keys: z.array(z.string()),
  policy_version: z.string().nullable(),
  sampling: GroupSampling,
});

/** `.evaluation.lock`: present while a process runs the job. */
export const EvaluationLock = z.object({ pid: z.number(), host: z.string(), started_at: z.string() }).loose();
export type EvaluationLock = z.infer<typeof EvaluationLock>;
export const WrittenEvaluationLock = z.strictObject(EvaluationLock.shape);

/** `summary.json`: written when a job ends. passed + failed + errored + verifier_errored == total. */
export const JobSummary = z
  .object({
    job_name: z.string(),
    agent: z.string(),
    model: z.string().nullable(),
    environment: z.string(),
    concurrency: z.number(),
    total: z.number(),
    passed: z.number(),
    failed: z.number(),
    errored: z.number(),
    verifier_errored: z.number(),
    error_categories: z.record(z.string(), z.number()),
    verifier_error_categories: z.record(z.string(), z.number()),
    /** Over the rollouts attributed `score` (0 where the verifier gave nothing); masked ones are left out. */
    mean_reward: z.number().nullable(),
    /** Rollouts a trainer learns from (attribution score) and those it masks; absent from older writers. */
    scored: z.number().optional(),
    masked: z.number().optional(),
    score: z.string(),
    score_ratio: z.number(),
    elapsed_sec: z.number(),
    started_at: z.string(),
    finished_at: z.string(),
    /** Planned rollouts the job never started because the run stopped early (see `stopped`). */
    not_started: z.number().default(0),
    /** USD the job's rollouts cost (their agent_result.cost_usd summed); null when none has a cost. */
    cost_usd: z.number().nullable().optional(),
    /** Why the run stopped starting rollouts: the endpoint kept failing, or the user's configuration cannot work. */
    stopped: z
      .object({ reason: z.enum(["endpoint_failing", "config_error", "max_cost_usd"]), message: z.string() })
      .loose()
      .nullable()
      .default(null),
  })
  .loose();
export type JobSummary = z.infer<typeof JobSummary>;
export const WrittenJobSummary = z.strictObject({
  ...JobSummary.shape,
  error_categories: z.partialRecord(AgentErrorCategory, z.number().int()),
  verifier_error_categories: z.partialRecord(VerifierErrorCategory, z.number().int()),
  not_started: z.number().int(),
  scored: z.number().int(),
  masked: z.number().int(),
  stopped: z
    .strictObject({
      reason: z.enum(["endpoint_failing", "config_error", "max_cost_usd"]),
      message: z.string(),
    })
    .nullable(),
});

/** Upstream names a rollout `<task>__<8 hex>`. */
export function rolloutNameFor(taskName: string, hex8: string): string {
  return `${taskName}__${hex8}`;
}

/** The task part of a rollout folder name (everything before the last `__`). */
export function taskNameFromRolloutDir(name: string): string {
  const i = name.lastIndexOf("__");
  return i > 0 ? name.slice(0, i) : name;
}
