// Gemini generateContent: `contents` turns become chat messages, functionCall parts tool_calls,
// functionResponse parts tool messages; thought parts are dropped. The walk is src/dialects' (shared
// with the gateway); this file gives a row's style. A call without an id gets the same one in the
// request that made it and in every later request's history (by turn and position), so a row's
// tool messages answer its calls.
import {
  type GeminiStyle,
  geminiAssistant,
  geminiResultText,
  geminiSystem,
  geminiToolDefs,
  geminiTurns,
} from "../../dialects/gemini.js";
import { isObj } from "../../dialects/index.js";
import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { type Conversation, type Obj, toolCall, toolDef } from "./common.js";

const ROW: GeminiStyle<string, ToolCall> = {
  text: (texts, role) => texts.join(role === "user" ? "\n" : ""),
  call: (c) => toolCall(c.id, c.name, c.args, c.id),
  result: (response) => geminiResultText(response),
  idFor: (turn, n) => `call_g${turn}_${n}`,
};

export function fromGemini(req: Obj): Omit<Conversation, "assistant"> {
  const messages: ChatMessage[] = [];
  const system = geminiSystem(req.systemInstruction);
  if (system !== "") messages.push({ role: "system", content: system });
  const turns = geminiTurns(req.contents, ROW) as ChatMessage[];
  messages.push(...turns.map((m) => (m.reasoning_content === undefined ? m : withoutReasoning(m))));
  const tools = geminiToolDefs(req.tools).flatMap((d) => toolDef(d.name, d.description, d.parameters) ?? []);
  return { messages, tools: tools as ToolDef[] };
}

function withoutReasoning(m: ChatMessage): ChatMessage {
  const { reasoning_content: _, ...rest } = m as ChatMessage & { reasoning_content?: string };
  return rest as ChatMessage;
}

/**
 * A response's first candidate as the assistant message; its calls' ids are the ones the next
 * request's history gives them (the turn that answer becomes is that request's `contents` length).
 */
export function geminiReply(res: Obj, req: Obj): ChatMessage | null {
  const candidate = Array.isArray(res.candidates) ? res.candidates.find(isObj) : undefined;
  const content = candidate && isObj(candidate.content) ? candidate.content : null;
  const parts = content && Array.isArray(content.parts) ? content.parts.filter(isObj) : [];
  if (parts.length === 0) return null;
  const turn = Array.isArray(req.contents) ? req.contents.length : 0;
  return withoutReasoning(geminiAssistant(parts, ROW, turn).turn as ChatMessage);
}
