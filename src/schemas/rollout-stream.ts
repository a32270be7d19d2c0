// The token-capture summary of a rollout and the stream record (`benchflow.rollout-stream.v1`).

import { z } from "zod";
import { Attribution, AttributionReason } from "./attribution.js";
import { ScoreOutcomeName, TokenSequence, WithheldReason } from "./train-rows.js";

export const TokenThread = z.object({
  thread: z.number().int(),
  kind: z.enum(["agent", "subagent", "helper", "chat"]),
  calls: z.array(z.number().int()),
});
export type TokenThread = z.infer<typeof TokenThread>;

export const PrefixBreak = z.object({
  thread: z.number().int(),
  call: z.number().int(),
  previous_call: z.number().int(),
  reason: z.string(),
});

export const TokenCaptureSummary = z
  .object({
    status: z.enum(["captured", "capture_off", "no_gateway_capture"]),
    training_grade: z.boolean(),
    path: z.array(z.string()).describe("providers the calls were routed to"),
    calls: z.number().int(),
    captured_calls: z.number().int(),
    complete_calls: z.number().int(),
    unavailable: z.record(z.string(), z.number().int()).describe("field -> number of calls that lack it"),
    prefix: z.object({
      pairs: z.number().int(),
      extends_previous_call: z.number().int(),
      breaks: z.array(PrefixBreak),
    }),
    threads: z.array(TokenThread),
    reason: z.string().optional().describe("why the rollout is not training-grade"),
  })
  .meta({ title: "benchflow token capture summary" });
export type TokenCaptureSummary = z.infer<typeof TokenCaptureSummary>;

export const CapturedCall = z.object({
  index: z.number().int(),
  provider: z.string().nullable(),
  prompt_token_ids: z.array(z.number().int()).nullable(),
  completions: z.array(
    z.object({
      index: z.number().int(),
      token_ids: z.array(z.number().int()).nullable(),
      logprobs: z.array(z.number()).nullable(),
    }),
  ),
  unavailable: z.record(z.string(), z.unknown()),
});
export type CapturedCall = z.infer<typeof CapturedCall>;

export const StreamRecord = z
  .object({
    schema_version: z.literal("benchflow.rollout-stream.v1"),
    job: z.string(),
    rollout: z.string(),
    rollout_path: z.string().describe("the rollout folder below the streamed path"),
    task: z.string(),
    agent: z.string().nullable(),
    model: z.string().nullable(),
    group_id: z.string(),
    group: z.record(z.string(), z.string().nullable()).describe("the --group-by key values"),
    reward: z.number().nullable().describe("null when unscored; never read it as 0"),
    rewards: z
      .record(z.string(), z.number())
      .nullable()
      .optional()
      .describe("every key of result.json rewards (the task's reward.json keys; a multi-step task's steps)"),
    scored: z.boolean(),
    outcome: ScoreOutcomeName.nullable().describe(
      "upstream's outcome: passed (reward 1.0), failed (scored, below 1), errored, verifier_errored",
    ),
    error: z.string().nullable().describe("the error category, as in a row's group block"),
    result: z.enum(["present", "missing", "truncated"]),
    finished_at: z.string().nullable(),
    token_capture: TokenCaptureSummary,
    calls: z.array(CapturedCall),
    sequences: z.array(TokenSequence).optional(),
    advantage: z.number().nullable(),
    group_complete: z.boolean().nullable(),
    outcome_category: z
      .string()
      .nullable()
      .describe("our outcome category (timeout, provider_error, ...) or null when it ended cleanly"),
    attribution: Attribution.nullable().describe("score (learn from it) or mask; null: no readable result"),
    attribution_reason: AttributionReason.nullable(),
    in_baseline: z.boolean(),
    withheld: WithheldReason.nullable(),
    normalisation: z.enum(["grpo", "loo"]).nullable(),
    group_rollouts: z.number().int().nullable(),
    group_scored: z.number().int().nullable(),
    group_mean: z.number().nullable(),
    group_std: z.number().nullable(),
    replaces: z.string().nullable(),
    retried: z.boolean(),
    policy_versions: z.array(z.string()),
    non_agent_calls: z
      .number()
      .int()
      .optional()
      .describe(
        "Calls another process in the sandbox made (a command the agent's tools ran): not in calls or sequences",
      ),
  })
  .loose()
  .meta({
    title: "benchflow.rollout-stream.v1",
    description: "One finished rollout, as bench train stream prints it.",
  });
export type StreamRecord = z.infer<typeof StreamRecord>;
