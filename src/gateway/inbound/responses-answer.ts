// Chat answer -> OpenAI Responses answer: a Response object whose output items are reasoning, the
// assistant message, and function_call (or custom_tool_call) items, in the order the model produced them.
import { randomId } from "../inbound.js";
import type { ChatChoice, ChatCompletion, ChatToolCall, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";
import type { RequestTools } from "./responses-request.js";

export function reasoningItem(id: string, text: string, status = "completed"): JsonObject {
  return { id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }], status };
}

export function messageItem(id: string, text: string, status = "completed"): JsonObject {
  return {
    id,
    type: "message",
    status,
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
  };
}

/** A tool call as its output item; calls to custom tools carry the raw `input` string. */
export function toolItem(
  call: ChatToolCall,
  tools: RequestTools,
  id?: string,
  status = "completed",
): JsonObject {
  const callId = call.id || randomId("call_");
  if (tools.custom.has(call.function.name)) {
    return {
      id: id ?? randomId("ctc_"),
      type: "custom_tool_call",
      status,
      call_id: callId,
      name: call.function.name,
      input: customInput(call.function.arguments),
    };
  }
  return {
    id: id ?? randomId("fc_"),
    type: "function_call",
    status,
    call_id: callId,
    // A namespaced tool's call names its namespace apart, as the agent listed it.
    ...(tools.namespaced.get(call.function.name) ?? { name: call.function.name }),
    arguments: call.function.arguments,
  };
}

function customInput(args: string): string {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (isObject(parsed) && typeof parsed.input === "string") return parsed.input;
  } catch {
    // the model wrote the input itself rather than {"input": ...}
  }
  return args;
}

export function outputItems(choice: ChatChoice | undefined, tools: RequestTools): JsonObject[] {
  if (!choice) return [];
  const items: JsonObject[] = [];
  const m = choice.message;
  if (m.reasoning_content) items.push(reasoningItem(randomId("rs_"), m.reasoning_content));
  if (m.content) items.push(messageItem(randomId("msg_"), m.content));
  for (const call of m.tool_calls ?? []) items.push(toolItem(call, tools));
  return items;
}

export function responsesUsage(usage: ChatCompletion["usage"]): Json {
  if (!usage) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

export interface ResponseState {
  id: string;
  createdAt: number;
  model: string;
  status: "in_progress" | "completed" | "incomplete" | "failed";
  output: JsonObject[];
  usage: Json;
  error?: JsonObject | null;
}

/** The Response object, echoing the agent's own settings as the API does. */
export function responseObject(request: JsonObject, s: ResponseState): JsonObject {
  const reasoning = isObject(request.reasoning) ? request.reasoning : {};
  return {
    id: s.id,
    object: "response",
    created_at: s.createdAt,
    status: s.status,
    completed_at: s.status === "in_progress" ? null : Math.floor(Date.now() / 1000),
    error: s.error ?? null,
    incomplete_details: s.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: s.model,
    output: s.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    store: false,
    temperature: request.temperature ?? 1,
    text: isObject(request.text) ? request.text : { format: { type: "text" } },
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: s.usage,
    user: null,
    metadata: {},
  };
}

export function statusOf(choice: ChatChoice | undefined): "completed" | "incomplete" {
  return choice?.finish_reason === "length" ? "incomplete" : "completed";
}
