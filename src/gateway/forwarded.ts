// What of an agent's request reaches the policy server: one allowlist per inbound dialect of the
// fields real agent CLIs send, and one of the chat fields the gateway forwards upstream. A field
// outside them (n above 1, best_of, logit_bias, top_k, ignore_eos, min_tokens, guided decoding,
// priority, a LoRA choice, prompt logprobs, ...) is a server-side knob no agent needs: it would change
// the distribution the rollout is sampled from, or its cost, behind the recorded request's back. It is
// dropped and named in the call's line (`dropped_fields`) and the rollout's count.
import type { JsonObject, Wire } from "./types.js";
import { isObject } from "./types.js";

/**
 * The chat request fields the gateway sends upstream (the run's own model, sampling, seed and
 * capture fields are set after this filter, so they are not listed).
 */
const CHAT_UPSTREAM = new Set([
  "model",
  "messages",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "functions",
  "function_call",
  "stream",
  "stream_options",
  "stop",
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "reasoning_effort",
  "response_format",
  "logprobs",
  "top_logprobs",
]);

/** Fields agents send that carry nothing for the policy server (bookkeeping): not forwarded, not counted. */
const BOOKKEEPING: Record<Wire, ReadonlySet<string>> = {
  "openai-chat": new Set(["user", "metadata", "store", "prompt_cache_key", "safety_identifier"]),
  "anthropic-messages": new Set([
    "metadata",
    "service_tier",
    "context_management",
    "container",
    "mcp_servers",
  ]),
  "gemini-generate-content": new Set(["safetySettings", "labels"]),
  "openai-responses": new Set([
    "user",
    "metadata",
    "store",
    "include",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
    "previous_response_id",
    "truncation",
    "background",
  ]),
};

/** What each dialect's agents may send: the fields its conversion to chat reads. */
const AGENT_FIELDS: Record<Wire, ReadonlySet<string>> = {
  "openai-chat": CHAT_UPSTREAM,
  "anthropic-messages": new Set([
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "max_tokens",
    "temperature",
    "top_p",
    "stop_sequences",
    "stream",
    "thinking",
  ]),
  "gemini-generate-content": new Set([
    "contents",
    "systemInstruction",
    "tools",
    "toolConfig",
    "generationConfig",
  ]),
  "openai-responses": new Set([
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "reasoning",
    "text",
    "stream",
  ]),
};

/** What an agent of this dialect may send (what else it sends is dropped and counted). */
export function agentFields(wire: Wire): ReadonlySet<string> {
  return AGENT_FIELDS[wire];
}

/** What of Gemini's generationConfig goes upstream (as chat's temperature, top_p, max_tokens, stop). */
const GEMINI_GENERATION = new Set(["temperature", "topP", "maxOutputTokens", "stopSequences"]);

/** The stream options an agent may set; the gateway adds include_usage itself. */
const STREAM_OPTIONS = new Set(["include_usage"]);
/** OpenAI's own bound on top_logprobs: more is a server-side cost no agent needs. */
const MAX_TOP_LOGPROBS = 20;

/**
 * The agent's request fields this dialect does not forward: what the line and the rollout count as
 * dropped. `n: 1` asks for nothing beyond the default and is not counted.
 */
export function droppedFields(wire: Wire, request: JsonObject): string[] {
  const allowed = AGENT_FIELDS[wire];
  const quiet = BOOKKEEPING[wire];
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(request)) {
    if (allowed.has(name) || quiet.has(name)) continue;
    if (name === "n" && value === 1) continue;
    dropped.push(name);
  }
  if (wire === "openai-chat") dropped.push(...droppedInside(request));
  if (wire === "gemini-generate-content" && isObject(request.generationConfig))
    for (const key of Object.keys(request.generationConfig))
      if (!GEMINI_GENERATION.has(key)) dropped.push(`generationConfig.${key}`);
  return dropped;
}

/** The parts of allowed chat fields that are over their bounds (named field.part). */
function droppedInside(request: JsonObject): string[] {
  const out: string[] = [];
  const options = request.stream_options;
  if (isObject(options))
    for (const key of Object.keys(options)) if (!STREAM_OPTIONS.has(key)) out.push(`stream_options.${key}`);
  const top = request.top_logprobs;
  if (typeof top === "number" && top > MAX_TOP_LOGPROBS) out.push("top_logprobs");
  return out;
}

/**
 * The chat body made from the agent's request, cut, in place, to what goes upstream: whatever a
 * conversion carries over, only these fields leave the gateway.
 */
export function forwardedChat(body: JsonObject): JsonObject {
  for (const name of Object.keys(body)) if (!CHAT_UPSTREAM.has(name)) delete body[name];
  // A copy: the chat dialect's body shares its nested objects with the agent's request.
  const options = body.stream_options;
  if (isObject(options))
    body.stream_options = Object.fromEntries(Object.entries(options).filter(([k]) => STREAM_OPTIONS.has(k)));
  else delete body.stream_options;
  if (typeof body.top_logprobs === "number" && body.top_logprobs > MAX_TOP_LOGPROBS) delete body.top_logprobs;
  return body;
}
