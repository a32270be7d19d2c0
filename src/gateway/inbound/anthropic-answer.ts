// Chat answer -> Anthropic Message: thinking, text and tool_use blocks, the stop reason, the usage.
import { randomId } from "../inbound.js";
import type { ChatChoice, ChatCompletion, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";

export function messageObject(
  c: ChatCompletion,
  request: JsonObject,
  id: string,
  toolIds: Map<number, string>,
): JsonObject {
  const choice = c.choices[0];
  const content: JsonObject[] = [];
  if (choice?.message.reasoning_content) {
    content.push({ type: "thinking", thinking: choice.message.reasoning_content, signature: "" });
  }
  if (choice?.message.content) content.push({ type: "text", text: choice.message.content });
  (choice?.message.tool_calls ?? []).forEach((call, i) => {
    content.push({
      type: "tool_use",
      id: call.id || toolIds.get(i) || randomId("toolu_"),
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  });
  const stop = stopOf(choice, request);
  return {
    id,
    type: "message",
    role: "assistant",
    model: c.model,
    content,
    stop_reason: stop.reason,
    stop_sequence: stop.sequence,
    usage: usageOf(c),
  };
}

/** Tool input must be an object; arguments that are not one keep their text for the agent to reject. */
export function toolInput(args: Json | undefined): Json {
  if (isObject(args)) return args;
  try {
    const parsed = JSON.parse(typeof args === "string" && args !== "" ? args : "{}") as Json;
    if (isObject(parsed)) return parsed;
  } catch {
    // fall through
  }
  return { _raw_arguments: String(args ?? "") };
}

export function stopOf(
  choice: ChatChoice | undefined,
  request: JsonObject,
): { reason: string; sequence: string | null } {
  if (choice?.message.tool_calls?.length || choice?.finish_reason === "tool_calls") {
    return { reason: "tool_use", sequence: null };
  }
  if (choice?.finish_reason === "length") return { reason: "max_tokens", sequence: null };
  if (choice?.finish_reason === "content_filter") return { reason: "refusal", sequence: null };
  const stops = Array.isArray(request.stop_sequences) ? request.stop_sequences : [];
  if (typeof choice?.stop_reason === "string" && stops.includes(choice.stop_reason)) {
    return { reason: "stop_sequence", sequence: choice.stop_reason };
  }
  return { reason: "end_turn", sequence: null };
}

export function usageOf(c: ChatCompletion): JsonObject {
  return {
    input_tokens: c.usage?.prompt_tokens ?? 0,
    output_tokens: c.usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}
