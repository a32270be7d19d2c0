// `--manifest FILE`: counts by reason, and every group with its members.

import { z } from "zod";
import { Attribution, AttributionReason } from "./attribution.js";
import { GroupBlock, GroupByKey, NormalisationName, ScoreOutcomeName, WithheldReason } from "./train-rows.js";

export const SKIP_REASONS = [
  "skipped_retried",
  "skipped_no_result",
  "skipped_truncated_result",
  "skipped_terminal_error",
  "skipped_withheld_group",
  "skipped_reward",
  "skipped_no_trajectory",
  "skipped_provider_error",
  "skipped_exchanges_provider_error",
  "skipped_no_assistant",
  "skipped_missing_tool_defs",
  "skipped_helper_calls",
  "skipped_non_agent_calls",
  "skipped_not_training_grade",
  "skipped_secret_in_tokens",
  "skipped_invalid",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

const SKIP_COUNTS = Object.fromEntries(SKIP_REASONS.map((r) => [r, z.number().int()])) as Record<
  SkipReason,
  z.ZodNumber
>;

/** Claude Code subagents: counted in any rollout whose calls were attributed to a parent and subagents. */
export const SUBAGENT_STATS = [
  "rollouts_with_subagents",
  "subagent_calls_seen",
  "subagent_exchanges_seen",
  "subagent_exchanges_excluded",
  "subagent_rows_written",
] as const;
export type SubagentStat = (typeof SUBAGENT_STATS)[number];
const SUBAGENT_COUNTS = Object.fromEntries(SUBAGENT_STATS.map((r) => [r, z.number().int()])) as Record<
  SubagentStat,
  z.ZodNumber
>;

export const GroupMember = z.object({
  rollout: z.string(),
  rollout_dir: z.string(),
  job: z.string(),
  reward: z.number().nullable(),
  rewards: z
    .record(z.string(), z.number())
    .nullable()
    .optional()
    .describe("every key of result.json rewards (the task's reward.json keys; a multi-step task's steps)"),
  advantage: z.number().nullable(),
  outcome: ScoreOutcomeName.nullable().describe("upstream's: passed, failed, errored, verifier_errored"),
  outcome_category: z.string().nullable().describe("our outcome category (timeout, provider_error, ...)"),
  attribution: Attribution.nullable(),
  attribution_reason: AttributionReason.nullable(),
  error: z.string().nullable(),
  in_baseline: z.boolean(),
  result: z.enum(["present", "missing", "truncated"]),
  withheld_reason: WithheldReason.optional().describe("what this member does to its group"),
  excluded: z.enum(["unscored", "single_scored_rollout"]).optional(),
});
export type GroupMember = z.infer<typeof GroupMember>;

export const ManifestGroup = z.object({
  id: z.string(),
  by: z.array(GroupByKey),
  key: z.record(z.string(), z.string().nullable()),
  normalisation: NormalisationName,
  formula: z.string(),
  rollouts: z.number().int(),
  scored: z.number().int(),
  mean: z.number().nullable(),
  std: z.number().nullable(),
  std_ddof: z.number().int(),
  eps: z.number(),
  withheld: WithheldReason.nullable(),
  withheld_outcomes: z
    .array(z.string())
    .describe(
      "the outcome categories (provider_error, config_error, task_error, verifier_failure, ...) of the members that withheld the group; empty when it is not withheld",
    ),
  vector_names_differ: z.literal(true).optional(),
  mixed: GroupBlock.shape.mixed,
  members: z.array(GroupMember),
});
export type ManifestGroup = z.infer<typeof ManifestGroup>;

export const RetriedAttempt = z.object({
  rollout: z.string(),
  rollout_dir: z.string(),
  replaced_by: z.string().nullable(),
  reason: z.string(),
});
export type RetriedAttempt = z.infer<typeof RetriedAttempt>;

export const InferredRollout = z.object({
  rollout_dir: z.string(),
  inferred: z
    .record(z.string(), z.string().nullable())
    .describe(
      'result.json fields filled in, and from where ("folder name", "config.json", "evaluation.json", "reward" for a legacy top-level reward); null: nothing to fill from, left null',
    ),
  ignored: z
    .record(z.string(), z.string())
    .optional()
    .describe("result.json fields of the wrong type, left out, and why"),
});
export type InferredRollout = z.infer<typeof InferredRollout>;

export const Manifest = z
  .object({
    schema_version: z.literal("benchflow.train-manifest.v1"),
    format: z.enum(["prime-sft", "trl-sft", "tokens"]),
    row_mode: z.enum(["rollout", "exchange"]),
    rollouts_seen: z.number().int().describe("rollouts considered; replaced attempts are not counted"),
    exchanges_seen: z.number().int(),
    rows_written: z.number().int(),
    rows_with_tool_calls: z.number().int(),
    ...SKIP_COUNTS,
    tool_call_ids_rewritten: z
      .number()
      .int()
      .describe(
        "tool calls whose id was set to that of the output answering them (older rows' fc_/call_ ids)",
      ),
    tool_messages_merged: z
      .number()
      .int()
      .describe("tool outputs merged into the one before them (same call id, one output in fragments)"),
    sources: z.array(z.string()),
    retried: z.array(RetriedAttempt),
    not_training_grade: z.array(z.object({ rollout_dir: z.string(), reason: z.string() })),
    inferred: z
      .array(InferredRollout)
      .optional()
      .describe("rollouts whose result.json lacked fields (upstream's), with what was filled in"),
    ...SUBAGENT_COUNTS,
    rows_compacted: z.number().int().optional().describe("trl-sft: rows the message window shortened"),
    messages_dropped: z
      .number()
      .int()
      .optional()
      .describe("trl-sft: prompt messages the message window left out"),
    max_original_tokens: z.number().int().optional().describe("trl-sft message-window: longest row before"),
    max_final_tokens: z.number().int().optional().describe("trl-sft message-window: longest row written"),
    redact: z.boolean().describe("secrets in row content were redacted (--redact, the default)"),
    rows_redacted: z.number().int().describe("rows written with at least one secret redacted"),
    secrets_redacted: z.number().int().describe("secrets replaced by ***REDACTED*** in the rows written"),
    secrets_in_tokens: z
      .array(z.object({ rollout_dir: z.string(), thread: z.number().int(), reason: z.string() }))
      .describe("tokens rows left out because their source text holds a secret (ids cannot be redacted)"),
    training_signal: z
      .object({
        reward_vector: z.boolean().describe("whether rows carry reward_vector"),
        group_advantage: NormalisationName.nullable().describe(
          "null: --reward-vector without --group-advantage",
        ),
        group_by: z.array(GroupByKey),
        std_ddof: z.number().int(),
        eps: z.number(),
        groups: z.array(ManifestGroup),
      })
      .nullable(),
  })
  .meta({ title: "benchflow train manifest" });
export type Manifest = z.infer<typeof Manifest>;
