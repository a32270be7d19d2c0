// Anthropic Messages: content blocks become chat messages; tool_use becomes tool_calls and each
// tool_result its own tool message, placed before any text of the same user turn. The walk is
// src/dialects' (shared with the gateway); a row's style: text blocks joined by newlines, thinking
// dropped, server tool calls kept, a missing call id given one.

import {
  type AnthropicStyle,
  anthropicAssistant,
  anthropicToolDefs,
  anthropicTurns,
} from "../../dialects/index.js";
import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { arrayOf, type Conversation, contentOf, type Obj, ROW_TOOLS, toolCall } from "./common.js";

const ROW: AnthropicStyle<string | unknown[], ToolCall> = {
  textSeparator: "\n",
  emptyText: "",
  keepThinking: false,
  callTypes: ["tool_use", "server_tool_use"],
  toolCall: (b, turn, n) => toolCall(b.id, b.name, b.input, `toolu_${turn}_${n}`),
  toolResult: (content) => contentOf(content ?? ""),
  userContent: (rest, hadResults) => (rest.length > 0 || !hadResults ? contentOf(rest) : undefined),
};

export function anthropicTools(tools: unknown): ToolDef[] {
  return anthropicToolDefs(tools, { ...ROW_TOOLS, nestedFunction: true });
}

/** A response's content blocks as one assistant message; null for no blocks (nothing was said). */
export function anthropicReply(content: unknown[], where: string): ChatMessage | null {
  return content.length === 0 ? null : (anthropicAssistant(content, ROW, where) as ChatMessage);
}

export function fromAnthropic(req: Obj, exchangeIndex: number): Omit<Conversation, "assistant"> {
  const messages: ChatMessage[] = [];
  const system = contentOf(req.system ?? "");
  if (system !== "") messages.push({ role: "system", content: system });
  messages.push(
    ...(anthropicTurns(arrayOf(req.messages), ROW, (i) => `${exchangeIndex}_${i}`) as ChatMessage[]),
  );
  return { messages, tools: anthropicTools(req.tools) };
}
