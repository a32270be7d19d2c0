// The files of one rollout folder and of one job folder. Field names follow upstream BenchFlow
// so users (and upstream's readers) can move between the two; `.loose()` keeps fields we do not
// know, because job folders written by upstream carry more.
import { z } from "zod";

export const Rewards = z.object({ reward: z.number() }).catchall(z.unknown());

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
export const TrialResult = z
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
  })
  .loose();
export type TrialResult = z.infer<typeof TrialResult>;

/** `replaced.json`: beside an attempt that a retry or a resume replaced. Such an attempt is in no group. */
export const ReplacedMarker = z
  .object({
    replaced_by: z.string(),
    reason: z.enum(["retried", "interrupted", "resumed"]),
    at: z.string(),
  })
  .loose();
export type ReplacedMarker = z.infer<typeof ReplacedMarker>;

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
  })
  .loose();
export type EvaluationPlan = z.infer<typeof EvaluationPlan>;

/** `.evaluation.lock`: present while a process runs the job. */
export const EvaluationLock = z.object({ pid: z.number(), host: z.string(), started_at: z.string() }).loose();
export type EvaluationLock = z.infer<typeof EvaluationLock>;

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
    mean_reward: z.number().nullable(),
    score: z.string(),
    score_ratio: z.number(),
    elapsed_sec: z.number(),
    started_at: z.string(),
    finished_at: z.string(),
    /** Planned trials the job never started because the run stopped early (see `stopped`). */
    not_started: z.number().default(0),
    /** Why the run stopped starting trials: the endpoint kept failing, or the user's configuration cannot work. */
    stopped: z
      .object({ reason: z.enum(["endpoint_failing", "config_error"]), message: z.string() })
      .loose()
      .nullable()
      .default(null),
  })
  .loose();
export type JobSummary = z.infer<typeof JobSummary>;

/** Upstream names a rollout `<task>__<8 hex>`. */
export function rolloutNameFor(taskName: string, hex8: string): string {
  return `${taskName}__${hex8}`;
}

/** The task part of a rollout folder name (everything before the last `__`). */
export function taskNameFromRolloutDir(name: string): string {
  const i = name.lastIndexOf("__");
  return i > 0 ? name.slice(0, i) : name;
}
