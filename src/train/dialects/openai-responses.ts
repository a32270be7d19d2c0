// OpenAI Responses: input items (messages, function calls and their outputs) become chat messages;
// consecutive calls join one assistant turn; reasoning items are dropped. The walk is src/dialects'
// (shared with the gateway); this file gives a row's style.

import { type ResponsesStyle, responsesToolDefs, responsesTurns } from "../../dialects/index.js";
import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
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
function itemsToMessages(items: unknown[], where: string): ChatMessage[] {
  return responsesTurns(items, rowStyle(where)) as ChatMessage[];
}

export function responsesTools(tools: unknown): ToolDef[] {
  return responsesToolDefs(tools, { ...ROW_TOOLS, nestedFunction: true });
}

export function fromOpenAIResponses(req: Obj, res: Obj, exchangeIndex: number): Conversation {
  const messages: ChatMessage[] = [];
  if (typeof req.instructions === "string" && req.instructions !== "") {
    messages.push({ role: "system", content: req.instructions });
  }
  const input = typeof req.input === "string" ? [req.input] : arrayOf(req.input);
  messages.push(...itemsToMessages(input, String(exchangeIndex)));
  let assistant: ChatMessage | null = null;
  if (Array.isArray(res.output)) {
    const reply = itemsToMessages(res.output, `${exchangeIndex}_r`).filter((m) => m.role === "assistant");
    assistant = {
      role: "assistant",
      content: reply.map((m) => (typeof m.content === "string" ? m.content : "")).join(""),
    };
    const calls = reply.flatMap((m) => m.tool_calls ?? []);
    if (calls.length > 0) assistant.tool_calls = calls;
  }
  return { messages, assistant, tools: responsesTools(req.tools) };
}
