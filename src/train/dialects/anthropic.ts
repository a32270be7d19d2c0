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
  return anthropicToolDefs(tools, ROW_TOOLS);
}

export function fromAnthropic(req: Obj, res: Obj, exchangeIndex: number): Conversation {
  const messages: ChatMessage[] = [];
  const system = contentOf(req.system ?? "");
  if (system !== "") messages.push({ role: "system", content: system });
  messages.push(
    ...(anthropicTurns(arrayOf(req.messages), ROW, (i) => `${exchangeIndex}_${i}`) as ChatMessage[]),
  );
  const assistant = Array.isArray(res.content)
    ? (anthropicAssistant(res.content, ROW, `${exchangeIndex}_r`) as ChatMessage)
    : null;
  return { messages, assistant, tools: anthropicTools(req.tools) };
}
