// What `bench train` writes: group blocks and rows (the manifest: train-manifest.ts; stream records:
// rollout-stream.ts). Types come from these schemas, and schemas/*.json is generated from them
// (scripts/gen-schemas.ts), so the two never drift.

import { z } from "zod";
import { Attribution, AttributionReason } from "./attribution.js";

export const GROUP_BY_KEYS = [
  "task",
  "agent",
  "model",
  "task_digest",
  "job",
  "policy_version",
  "run",
  "sampling",
] as const;
export const GroupByKey = z.enum(GROUP_BY_KEYS);
export type GroupByKey = z.infer<typeof GroupByKey>;
/**
 * Every reader's default: the rollouts of one run, task version, agent, model, policy version and
 * sampling (the group identity, schemas/group-identity.ts). Upstream's default is UPSTREAM_GROUP_BY.
 */
export const DEFAULT_GROUP_BY: GroupByKey[] = [
  "task",
  "agent",
  "model",
  "run",
  "task_digest",
  "policy_version",
  "sampling",
];
export const UPSTREAM_GROUP_BY: GroupByKey[] = ["task", "agent", "model", "job"];
/** The identity keys an explicit --group-by may leave out: a group they split is named as mixed. */
export const MIX_KEYS = ["task_digest", "policy_version", "sampling"] as const;
export type MixKey = (typeof MIX_KEYS)[number];

/** Why a whole group gives no rows and no advantages (the seed's rules). */
export const WITHHELD_REASONS = [
  "missing_result",
  "truncated_result",
  "unscored_member",
  "no_model_calls",
  "all_calls_failed",
] as const;
export const WithheldReason = z.enum(WITHHELD_REASONS);
export type WithheldReason = z.infer<typeof WithheldReason>;

export const NormalisationName = z.enum(["grpo", "loo"]);

/** Upstream's outcome of a rollout (its summary.json buckets): what `outcome` means in rows and records. */
export const ScoreOutcomeName = z.enum(["passed", "failed", "errored", "verifier_errored"]);

export const GroupBlock = z
  .object({
    id: z.string().describe("key=value pairs of --group-by, joined by |"),
    by: z.array(GroupByKey).describe("the --group-by keys, in order"),
    key: z.record(z.string(), z.string().nullable()).describe("the value of each --group-by key"),
    normalisation: NormalisationName,
    formula: z.string(),
    rollouts: z.number().int().describe("members of the group, scored or not; replaced attempts excluded"),
    scored: z.number().int(),
    mean: z.number().nullable(),
    std: z.number().nullable().describe("sample std (ddof 1); null with fewer than two scored rollouts"),
    std_ddof: z.number().int(),
    eps: z.number(),
    error: z.string().optional().describe("this rollout's error category, so a trainer can mask it"),
    excluded: z.literal("single_scored_rollout").optional(),
    vector_names_differ: z
      .literal(true)
      .optional()
      .describe("--reward-vector: the members' reward vectors name different components"),
    mixed: z
      .array(z.enum(MIX_KEYS))
      .optional()
      .describe(
        "an explicit --group-by put together rollouts that differ in these (task versions, policy versions, sampling)",
      ),
  })
  .meta({ title: "benchflow train group block", description: "How a row's advantage was made." });
export type GroupBlock = z.infer<typeof GroupBlock>;

export const ToolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({
    name: z.string(),
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
  }),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const ChatMessage = z
  .object({
    role: z.enum(["system", "user", "assistant", "tool"]),
    content: z
      .union([z.string(), z.array(z.unknown())])
      .nullable()
      .optional(),
    tool_calls: z.array(ToolCall).optional(),
    tool_call_id: z.string().optional(),
    name: z.string().optional(),
  })
  .loose();
export type ChatMessage = z.infer<typeof ChatMessage>;

export const ToolDef = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  }),
});
export type ToolDef = z.infer<typeof ToolDef>;

/** `--reward-vector`: the reward's components (upstream's verifier source), parallel lists. */
export const RewardVector = z
  .object({
    source: z.literal("verifier"),
    names: z
      .array(z.string())
      .describe("every finite number under result.json rewards, nested keys joined by ., reward first"),
    kinds: z.array(z.literal("verifier")),
    weights: z.array(z.null()),
    values: z.array(z.number()),
    formula: z.string(),
  })
  .meta({ title: "benchflow reward vector" });
export type RewardVector = z.infer<typeof RewardVector>;

/** Fields of optional flags: --reward-vector and --subagent-rows. */
const Extras = {
  reward_vector: RewardVector.nullable().optional().describe("--reward-vector; null when unscored"),
  advantage_vector: z
    .array(z.number().nullable())
    .nullable()
    .optional()
    .describe("--reward-vector with --group-advantage: one advantage per reward_vector component"),
  agent_role: z
    .enum(["parent", "subagent"])
    .optional()
    .describe("--subagent-rows: whose calls the row holds"),
  parent_tool_call_id: z
    .string()
    .optional()
    .describe("--subagent-rows: the tool call that started the subagent"),
  subagent_type: z.string().nullable().optional(),
  subagent_description: z.string().nullable().optional(),
};

/** Fields every row and stream record carries so a trainer can mask without knowing our rules. */
const Signal = {
  outcome: ScoreOutcomeName.nullable().describe(
    "upstream's outcome: passed (reward 1.0), failed (scored, below 1), errored, verifier_errored",
  ),
  outcome_category: z
    .string()
    .nullable()
    .describe(
      "our outcome category (timeout, agent_error, provider_error, ...) or null when it ended cleanly",
    ),
  attribution: Attribution.nullable().describe(
    "score: learn from it (reward 0 where the policy broke its own run); mask: it says nothing of the policy",
  ),
  attribution_reason: AttributionReason.nullable().describe("why: upstream's score-or-mask reasons"),
  in_baseline: z.boolean().describe("whether this rollout's reward entered its group's mean and std"),
  advantage: z.number().nullable().optional(),
  group: GroupBlock.optional(),
};

const RowSource = {
  rollout: z.string(),
  job: z.string(),
  reward: z.number().nullable(),
  rewards: z
    .record(z.string(), z.number())
    .nullable()
    .optional()
    .describe("every key of result.json rewards (the task's reward.json keys; a multi-step task's steps)"),
  agent: z.string().nullable(),
  model: z.string().nullable(),
  source_path: z.string(),
  source_rollout_dir: z.string(),
};

export const PrimeSftRow = z
  .object({
    messages: z.array(ChatMessage),
    tool_defs: z.array(ToolDef),
    task_name: z.string(),
    source: z.literal("benchflow-llm-trajectory"),
    exchange_index: z.number().int(),
    step: z.string().optional().describe("exchange mode, multi-step task: the step this call was made in"),
    score: z.number().nullable(),
    token_usage: z.record(z.string(), z.unknown()).optional(),
    ...RowSource,
    ...Signal,
    ...Extras,
  })
  .meta({
    title: "benchflow prime-sft row",
    description: "Window from the last user message of one model call.",
  });
export type PrimeSftRow = z.infer<typeof PrimeSftRow>;

export const TrlSftRow = z
  .object({
    prompt: z.array(ChatMessage),
    completion: z.array(ChatMessage),
    tools: z.array(ToolDef),
    task_id: z.string(),
    exchange_index: z.number().int(),
    step: z.string().optional().describe("exchange mode, multi-step task: the step this call was made in"),
    call_purpose: z.string(),
    source: z.literal("benchflow-llm-trajectory"),
    token_usage: z.record(z.string(), z.unknown()).optional(),
    context_window: z
      .object({
        policy: z.literal("message-window"),
        original_messages: z.number().int(),
        retained_messages: z.number().int(),
        messages_dropped: z.number().int(),
        original_tokens: z.number().int(),
        final_tokens: z.number().int(),
        max_length: z.number().int(),
        tokenizer: z.string(),
        tokenizer_revision: z.string().nullable(),
      })
      .optional()
      .describe("--context-policy message-window: what the window kept, in messages and tokens"),
    ...RowSource,
    ...Signal,
    ...Extras,
  })
  .meta({ title: "benchflow trl-sft row", description: "The full conversation as prompt/completion." });
export type TrlSftRow = z.infer<typeof TrlSftRow>;

export const TokenSequence = z.object({
  thread: z.number().int(),
  kind: z.enum(["agent", "subagent", "helper", "chat"]),
  calls: z.array(z.number().int()).describe("line indexes in llm_trajectory.jsonl"),
  prompt_ids: z.array(z.number().int()),
  completion_ids: z.array(z.number().int()),
  completion_mask: z.array(z.union([z.literal(0), z.literal(1)])).describe("1 only on sampled tokens"),
  completion_logprobs: z.array(z.number()),
});
export type TokenSequence = z.infer<typeof TokenSequence>;

export const TokensRow = z
  .object({
    ...TokenSequence.shape,
    task_name: z.string(),
    source: z.literal("benchflow-token-capture"),
    policy_versions: z.array(z.string()).optional(),
    ...RowSource,
    ...Signal,
    ...Extras,
  })
  .meta({ title: "benchflow tokens row", description: "One merged token sequence per conversation." });
export type TokensRow = z.infer<typeof TokensRow>;

export type TrainRow = PrimeSftRow | TrlSftRow | TokensRow;
