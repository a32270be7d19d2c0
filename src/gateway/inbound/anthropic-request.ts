// Anthropic Messages request -> chat request. tool_result blocks become tool messages (placed first,
// right after the assistant turn that called them), tool_use blocks become tool_calls, thinking blocks
// become `reasoning_content`. Server tools (web search, ...) have no chat equivalent and are dropped.
// The walk is src/dialects' (shared with train); this file gives the chat-request style.
import {
  type AnthropicStyle,
  anthropicToolDefs,
  anthropicTurns,
  type ToolStyle,
} from "../../dialects/index.js";
import { GatewayError } from "../errors.js";
import type { ChatMessage, ChatToolCall, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";

export function anthropicToChat(request: JsonObject): JsonObject {
  if (!Array.isArray(request.messages))
    throw new GatewayError(400, "`messages` must be a list", null, "policy");
  const messages: ChatMessage[] = [];
  const system = textOf(request.system);
  if (system !== null && system !== "") messages.push({ role: "system", content: system });
  messages.push(...anthropicTurns(request.messages, CHAT_REQUEST));
  const chat: JsonObject = { model: request.model ?? null, messages: messages as unknown as Json };
  const tools = anthropicToolDefs(request.tools, REQUEST_TOOLS);
  if (tools.length > 0) {
    chat.tools = tools;
    const choice = isObject(request.tool_choice) ? request.tool_choice : null;
    if (choice) chat.tool_choice = toolChoice(choice);
    if (choice?.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  if (typeof request.max_tokens === "number") chat.max_tokens = request.max_tokens;
  if (typeof request.temperature === "number") chat.temperature = request.temperature;
  if (typeof request.top_p === "number") chat.top_p = request.top_p;
  if (Array.isArray(request.stop_sequences) && request.stop_sequences.length > 0)
    chat.stop = request.stop_sequences;
  chat.stream = request.stream === true;
  return chat;
}

/** A chat request keeps thinking (as reasoning_content) and images; text blocks join with nothing. */
const CHAT_REQUEST: AnthropicStyle<string | JsonObject[] | null, ChatToolCall> = {
  textSeparator: "",
  emptyText: null,
  keepThinking: true,
  callTypes: ["tool_use"],
  toolCall: (b) => ({
    id: String(b.id ?? ""),
    type: "function",
    function: { name: String(b.name ?? ""), arguments: JSON.stringify(b.input ?? {}) },
  }),
  toolResult: (content) => textOf(content as Json | undefined) ?? "",
  userContent: (rest) => {
    const parts: JsonObject[] = rest.flatMap((b): JsonObject[] => {
      if (b.type === "text" && typeof b.text === "string") return [{ type: "text", text: b.text }];
      if (b.type === "image" && isObject(b.source)) {
        const s = b.source;
        const url = s.type === "base64" ? `data:${s.media_type};base64,${s.data}` : s.url;
        if (typeof url === "string") return [{ type: "image_url", image_url: { url } }];
      }
      return [];
    });
    if (parts.length === 0) return undefined;
    if (parts.length === 1 && parts[0]?.type === "text") return parts[0].text as string;
    return parts;
  },
};

/** Text of a string or of a list of blocks (text blocks joined by newlines); null when absent. */
function textOf(value: Json | undefined): string | null {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return null;
  return value
    .filter(isObject)
    .flatMap((b) => (typeof b.text === "string" ? [b.text] : []))
    .join("\n");
}

/** A request's functions: server tools are dropped (upstream cannot run them); the schema defaults to an object. */
const REQUEST_TOOLS: ToolStyle<JsonObject> = {
  keepBuiltIn: false,
  nestedFunction: false,
  customParameters: {},
  def: (t) => {
    const fn: JsonObject = {
      name: (t.name ?? "") as Json,
      parameters: (t.parameters ?? { type: "object" }) as Json,
    };
    if (typeof t.description === "string") fn.description = t.description;
    return { type: "function", function: fn };
  },
};

function toolChoice(choice: JsonObject): Json {
  if (choice.type === "any") return "required";
  if (choice.type === "none") return "none";
  if (choice.type === "tool" && typeof choice.name === "string") {
    return { type: "function", function: { name: choice.name } };
  }
  return "auto";
}
