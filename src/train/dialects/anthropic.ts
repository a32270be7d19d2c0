// Anthropic Messages: content blocks become chat messages; tool_use becomes tool_calls and each
// tool_result its own tool message, placed before any text of the same user turn.

import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import { arrayOf, type Conversation, contentOf, type Obj, toolCall, toolDef } from "./common.js";

function blocksOf(content: unknown): Obj[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return arrayOf(content).filter(isRecord);
}

function assistantFrom(content: unknown, where: string): ChatMessage {
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  for (const b of blocksOf(content)) {
    if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
    else if (b.type === "tool_use" || b.type === "server_tool_use") {
      calls.push(toolCall(b.id, b.name, b.input, `toolu_${where}_${calls.length}`));
    }
  }
  const msg: ChatMessage = { role: "assistant", content: texts.join("\n") };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

function userFrom(content: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  const rest: Obj[] = [];
  for (const b of blocksOf(content)) {
    if (b.type === "tool_result") {
      out.push({
        role: "tool",
        tool_call_id: String(b.tool_use_id ?? ""),
        content: contentOf(b.content ?? ""),
      });
    } else {
      rest.push(b);
    }
  }
  if (rest.length > 0 || out.length === 0) out.push({ role: "user", content: contentOf(rest) });
  return out;
}

export function anthropicTools(tools: unknown): ToolDef[] {
  const out: ToolDef[] = [];
  for (const t of arrayOf(tools)) {
    if (!isRecord(t)) continue;
    const def = toolDef(t.name, t.description, t.input_schema);
    if (def) out.push(def);
  }
  return out;
}

export function fromAnthropic(req: Obj, res: Obj, exchangeIndex: number): Conversation {
  const messages: ChatMessage[] = [];
  const system = contentOf(req.system ?? "");
  if (system !== "") messages.push({ role: "system", content: system });
  arrayOf(req.messages).forEach((m, i) => {
    if (!isRecord(m)) return;
    if (m.role === "assistant") messages.push(assistantFrom(m.content, `${exchangeIndex}_${i}`));
    else messages.push(...userFrom(m.content));
  });
  const assistant = Array.isArray(res.content) ? assistantFrom(res.content, `${exchangeIndex}_r`) : null;
  return { messages, assistant, tools: anthropicTools(req.tools) };
}
