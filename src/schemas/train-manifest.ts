// `--manifest FILE`: counts by reason, and every group with its members.
import { z } from "zod";
import { GroupByKey, NormalisationName, ScoreOutcomeName, WithheldReason } from "./train-rows.js";

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
  "skipped_not_training_grade",
  "skipped_invalid",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

const SKIP_COUNTS = Object.fromEntries(SKIP_REASONS.map((r) => [r, z.number().int()])) as Record<
  SkipReason,
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
    sources: z.array(z.string()),
    retried: z.array(RetriedAttempt),
    not_training_grade: z.array(z.object({ rollout_dir: z.string(), reason: z.string() })),
    training_signal: z
      .object({
        group_advantage: NormalisationName,
        group_by: z.array(GroupByKey),
        std_ddof: z.number().int(),
        eps: z.number(),
        groups: z.array(ManifestGroup),
      })
      .nullable(),
  })
  .meta({ title: "benchflow train manifest" });
export type Manifest = z.infer<typeof Manifest>;
