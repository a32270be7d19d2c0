// The two trajectory files of a rollout: trajectory/llm_trajectory.jsonl (one recorded model call a
// line, written by the gateway) and trajectory/acp_trajectory.jsonl (the agent's events). These are
// the written forms: our own objects refuse unknown keys; what was recorded from the wire (request
// and response bodies, the body sent upstream) and what a tool returned stay open.
import { z } from "zod";

const Headers = z.record(z.string(), z.string());
/** A body as it crossed the wire: JSON when it parsed, else its text, or null. Not ours to constrain. */
const WireBody = z.unknown().describe("recorded from the wire as it was sent; not constrained");

const Unavailable = z.strictObject({
  reason: z.enum(["provider_api_unsupported", "not_requested", "not_returned", "request_failed"]),
  detail: z.string(),
});

/** `metadata.token_capture` (`benchflow.token_capture.v1`): what the policy returned beyond text. */
export const TokenCaptureBlock = z
  .strictObject({
    schema_version: z.literal("benchflow.token_capture.v1"),
    wire: z.enum(["openai-chat", "openai-responses", "anthropic-messages", "gemini-generate-content"]),
    provider: z.string(),
    requested: z.strictObject({
      logprobs: z.boolean(),
      top_logprobs: z.number().int().nullable(),
      token_ids: z.boolean(),
    }),
    prompt_token_ids: z.array(z.number().int()).nullable(),
    completions: z.array(
      z.strictObject({
        index: z.number().int(),
        token_ids: z.array(z.number().int()).nullable(),
        tokens: z.array(z.string().nullable()).nullable(),
        logprobs: z.array(z.number().nullable()).nullable(),
        top_logprobs: z
          .array(z.array(z.strictObject({ token: z.unknown(), logprob: z.unknown() })).nullable())
          .nullable(),
      }),
    ),
    unavailable: z.record(z.string(), Unavailable).describe("field -> why it is missing"),
  })
  .meta({ title: "benchflow token capture block" });
export type TokenCaptureBlock = z.infer<typeof TokenCaptureBlock>;

/** One line of trajectory/llm_trajectory.jsonl (upstream's LLMExchange shape). */
export const TrajectoryLine = z
  .strictObject({
    request: z.strictObject({
      timestamp: z.string(),
      method: z.string(),
      path: z.string(),
      headers: Headers,
      body: WireBody,
    }),
    response: z.strictObject({
      timestamp: z.string(),
      status_code: z.number().int(),
      headers: Headers,
      body: WireBody,
    }),
    duration_ms: z.number(),
    metadata: z.strictObject({
      request_model: z.string().nullable(),
      provider_model: z.string(),
      call_type: z.string(),
      wire: z.enum(["openai-chat", "openai-responses", "anthropic-messages", "gemini-generate-content"]),
      stream: z.boolean(),
      input_shape: z.strictObject({
        has_messages: z.boolean(),
        has_input: z.boolean(),
        n_messages: z.number().int(),
      }),
      call_purpose: z.string(),
      policy_version: z.string().nullable(),
      served_policy_version: z.string().optional(),
      policy_version_mismatch: z.literal(true).optional(),
      sampling: z.strictObject({
        temperature: z.number().nullable(),
        top_p: z.number().nullable(),
        max_tokens: z.number().nullable(),
        reasoning_effort: z.string().nullable().optional(),
      }),
      upstream_request: z.strictObject({ path: z.string(), body: WireBody }).nullable(),
      upstream_status: z.number().int().nullable(),
      upstream_attempts: z.number().int(),
      fault: z.enum(["endpoint", "config", "policy", "agent", "gateway"]).nullable(),
      usage: z.strictObject({
        input_tokens: z.number().nullable(),
        output_tokens: z.number().nullable(),
        cache_read_tokens: z
          .number()
          .optional()
          .describe("of input_tokens, read from the provider's prompt cache (present when it reported one)"),
        cache_write_tokens: z
          .number()
          .optional()
          .describe("of input_tokens, written to the provider's prompt cache (Anthropic, OpenRouter)"),
      }),
      token_capture: TokenCaptureBlock.optional(),
      error: z.string().optional(),
      step: z.string().optional().describe("the step of a multi-step task this call was made in"),
      dropped_fields: z
        .array(z.string())
        .optional()
        .describe(
          "the agent's request fields the gateway did not forward to the policy server (server-side knobs no agent sends: n, logit_bias, ...)",
        ),
      origin: z
        .strictObject({
          kind: z.enum(["agent", "other", "unattributed"]),
          pid: z.number().int().optional(),
          comm: z.string().optional(),
          why: z.string().optional(),
        })
        .optional()
        .describe(
          "who in the sandbox opened the call's connection, as the trusted relay found it: agent (the agent's own process), other (a command its tools ran: never a training row unless asked), unattributed (no relay could tell)",
        ),
      refused: z
        .enum(["request", "answer", "recorded"])
        .optional()
        .describe(
          "the call was refused for going over a bound: its request over the per-call cap, the answer over it, or the rollout's recorded bytes at their cap (the body is then not recorded)",
        ),
    }),
  })
  .meta({ title: "benchflow llm_trajectory.jsonl line" });
export type TrajectoryLine = z.infer<typeof TrajectoryLine>;

const ts = z.string().optional();

/** One line of trajectory/acp_trajectory.jsonl (upstream's ACP event shapes). */
export const AgentEvent = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("user_message"), text: z.string(), ts }),
    z.strictObject({ type: z.literal("agent_message"), text: z.string(), ts }),
    z.strictObject({ type: z.literal("agent_thought"), text: z.string(), ts }),
    z.strictObject({
      type: z.literal("tool_call"),
      tool_call_id: z.string(),
      title: z.string(),
      kind: z.string(),
      status: z.enum(["completed", "failed", "pending"]),
      raw_input: z.unknown().describe("the tool's input as the agent gave it; not constrained"),
      raw_output: z.unknown().describe("what the tool returned; not constrained"),
      parent_tool_call_id: z
        .string()
        .optional()
        .describe("a subagent's call: the id of the tool call that started the subagent"),
      ts,
    }),
    z.strictObject({
      type: z.literal("oracle"),
      command: z.string(),
      return_code: z.number().int().nullable(),
      stdout: z.string(),
      ts,
    }),
  ])
  .meta({ title: "benchflow acp_trajectory.jsonl event" });
export type AgentEvent = z.infer<typeof AgentEvent>;
