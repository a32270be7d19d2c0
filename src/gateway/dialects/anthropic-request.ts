// Anthropic Messages request -> chat request. tool_result blocks become tool messages (placed first,
// right after the assistant turn that called them), tool_use blocks become tool_calls, thinking blocks
// become `reasoning_content`. Server tools (web search, ...) have no chat equivalent and are dropped.
import { GatewayError } from "../errors.js";
import type { ChatMessage, ChatToolCall, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";

export function anthropicToChat(request: JsonObject): JsonObject {
  if (!Array.isArray(request.messages))
    throw new GatewayError(400, "`messages` must be a list", null, "policy");
  const messages: ChatMessage[] = [];
  const system = textOf(request.system);
  if (system !== null && system !== "") messages.push({ role: "system", content: system });
  for (const message of request.messages) {
    if (!isObject(message)) continue;
    if (message.role === "assistant") messages.push(assistantTurn(message.content));
    else addUserTurn(messages, message.content);
  }
  const chat: JsonObject = { model: request.model ?? null, messages: messages as unknown as Json };
  const tools = chatTools(request.tools);
  if (tools.length > 0) {
    chat.tools = tools;
    const choice = isObject(request.tool_choice) ? request.tool_choice : null;
    if (choice) chat.tool_choice = toolChoice(choice);
    if (choice?.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  if (typeof request.max_tokens === "number") chat.max_tokens = request.max_tokens;
  if (typeof request.temperature === "number") chat.temperature = request.temperature;
  if (typeof request.top_p === "number") chat.top_p = request.top_p;
  if (typeof request.top_k === "number") chat.top_k = request.top_k;
  if (Array.isArray(request.stop_sequences) && request.stop_sequences.length > 0)
    chat.stop = request.stop_sequences;
  chat.stream = request.stream === true;
  return chat;
}

function assistantTurn(content: Json | undefined): ChatMessage {
  if (typeof content === "string") return { role: "assistant", content };
  const blocks = Array.isArray(content) ? content.filter(isObject) : [];
  const text = blocks
    .flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []))
    .join("");
  const thinking = blocks.flatMap((b) =>
    b.type === "thinking" && typeof b.thinking === "string" ? [b.thinking] : [],
  );
  const calls: ChatToolCall[] = blocks
    .filter((b) => b.type === "tool_use")
    .map((b) => ({
      id: String(b.id ?? ""),
      type: "function",
      function: { name: String(b.name ?? ""), arguments: JSON.stringify(b.input ?? {}) },
    }));
  const turn: ChatMessage = { role: "assistant", content: text === "" ? null : text };
  if (thinking.length > 0) turn.reasoning_content = thinking.join("");
  if (calls.length > 0) turn.tool_calls = calls;
  return turn;
}

function addUserTurn(messages: ChatMessage[], content: Json | undefined): void {
  if (typeof content === "string") {
    messages.push({ role: "user", content });
    return;
  }
  const blocks = Array.isArray(content) ? content.filter(isObject) : [];
  for (const block of blocks) {
    if (block.type !== "tool_result") continue;
    messages.push({
      role: "tool",
      tool_call_id: String(block.tool_use_id ?? ""),
      content: textOf(block.content) ?? "",
    });
  }
  const parts: JsonObject[] = blocks.flatMap((b): JsonObject[] => {
    if (b.type === "text" && typeof b.text === "string") return [{ type: "text", text: b.text }];
    if (b.type === "image" && isObject(b.source)) {
      const s = b.source;
      const url = s.type === "base64" ? `data:${s.media_type};base64,${s.data}` : s.url;
      if (typeof url === "string") return [{ type: "image_url", image_url: { url } }];
    }
    return [];
  });
  if (parts.length === 0) return;
  if (parts.length === 1 && parts[0]?.type === "text")
    messages.push({ role: "user", content: parts[0].text as string });
  else messages.push({ role: "user", content: parts });
}

/** Text of a string or of a list of blocks (text blocks joined by newlines); null when absent. */
function textOf(value: Json | undefined): string | null {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return null;
  return value
    .filter(isObject)
    .flatMap((b) => (typeof b.text === "string" ? [b.text] : []))
    .join("\n");
}

function chatTools(tools: Json | undefined): JsonObject[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isObject).flatMap((tool): JsonObject[] => {
    if (tool.type !== undefined && tool.type !== "custom") return [];
    const fn: JsonObject = { name: tool.name ?? "", parameters: tool.input_schema ?? { type: "object" } };
    if (typeof tool.description === "string") fn.description = tool.description;
    return [{ type: "function", function: fn }];
  });
}

function toolChoice(choice: JsonObject): Json {
  if (choice.type === "any") return "required";
  if (choice.type === "none") return "none";
  if (choice.type === "tool" && typeof choice.name === "string") {
    return { type: "function", function: { name: choice.name } };
  }
  return "auto";
}
