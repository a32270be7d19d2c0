// OpenAI Responses: input items (messages, function calls and their outputs) become chat messages;
// consecutive calls join one assistant turn; reasoning items are dropped. The walk is src/dialects'
// (shared with the gateway); this file gives a row's style.

import { type ResponsesStyle, responsesToolDefs, responsesTurns } from "../../dialects/index.js";
import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import { arrayOf, type Conversation, contentOf, type Obj, ROW_TOOLS, toolCall } from "./common.js";

/** A row's style: reasoning dropped, bare strings are user turns, roles normalised later, ids filled. */
function rowStyle(where: string): ResponsesStyle<string | unknown[], ToolCall> {
  return {
    emptyText: "",
    keepReasoning: false,
    stringItems: true,
    untypedNeedsRole: false,
    developerAsSystem: false,
    messageContent: (_role, content) => contentOf(content),
    toolCall: (item, i) =>
      // Freeform tools (Codex's apply_patch) carry raw text: keep it as the one argument `input`.
      item.type === "custom_tool_call"
        ? toolCall(item.call_id ?? item.id, item.name, { input: item.input }, `call_${where}_${i}`)
        : toolCall(item.call_id ?? item.id, item.name, item.arguments, `call_${where}_${i}`),
    toolResult: (output) => contentOf(output ?? ""),
  };
}

/** Items in order to chat messages; a call joins the assistant turn just before it. */
export function itemsToMessages(items: unknown[], where: string): ChatMessage[] {
  return responsesTurns(items, rowStyle(where)) as ChatMessage[];
}

export function responsesTools(tools: unknown): ToolDef[] {
  return responsesToolDefs(tools, { ...ROW_TOOLS, nestedFunction: true });
}

/**
 * A response's `output` as one assistant message: its message items' texts joined by newlines, its
 * calls as tool_calls, reasoning dropped. null when it has neither a message nor a call.
 */
export function responsesReply(output: unknown[], where: string): ChatMessage | null {
  const reply = itemsToMessages(output, where).filter((m) => m.role === "assistant");
  const texts = output.filter((item) => isRecord(item) && item.type === "message").length;
  const calls = reply.flatMap((m) => m.tool_calls ?? []);
  if (texts === 0 && calls.length === 0) return null;
  const content = reply
    .map((m) => (typeof m.content === "string" ? m.content : ""))
    .filter((t) => t !== "")
    .join("\n");
  const assistant: ChatMessage = { role: "assistant", content };
  if (calls.length > 0) assistant.tool_calls = calls;
  return assistant;
}

export function fromOpenAIResponses(req: Obj, exchangeIndex: number): Omit<Conversation, "assistant"> {
  const messages: ChatMessage[] = [];
  if (typeof req.instructions === "string" && req.instructions !== "") {
    messages.push({ role: "system", content: req.instructions });
  }
  const input = typeof req.input === "string" ? [req.input] : arrayOf(req.input);
  messages.push(...itemsToMessages(input, String(exchangeIndex)));
  return { messages, tools: responsesTools(req.tools) };
}
