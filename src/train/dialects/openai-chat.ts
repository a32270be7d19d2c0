// OpenAI chat completions: already the row shape; only content, tool calls and tool defs are tidied.

import type { ChatMessage, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import {
  arrayOf,
  type Conversation,
  cleanMessage,
  contentOf,
  type Obj,
  toolCall,
  toolDef,
} from "./common.js";

function chatMessage(m: Obj, where: string): ChatMessage {
  const msg: Obj = { ...m, content: m.content == null ? "" : contentOf(m.content) };
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
    msg.tool_calls = m.tool_calls.map((c, i) => {
      const call = isRecord(c) ? c : {};
      const fn = isRecord(call.function) ? call.function : {};
      return toolCall(call.id, fn.name, fn.arguments, `call_${where}_${i}`);
    });
  } else {
    delete msg.tool_calls;
  }
  return cleanMessage(msg);
}

export function chatTools(tools: unknown): ToolDef[] {
  const out: ToolDef[] = [];
  for (const t of arrayOf(tools)) {
    if (!isRecord(t)) continue;
    const fn = isRecord(t.function) ? t.function : t;
    const def = toolDef(fn.name, fn.description, fn.parameters);
    if (def) out.push(def);
  }
  return out;
}

export function fromOpenAIChat(req: Obj, res: Obj, exchangeIndex: number): Conversation {
  const messages = arrayOf(req.messages)
    .filter(isRecord)
    .map((m, i) => chatMessage(m, `${exchangeIndex}_${i}`));
  const choice = arrayOf(res.choices).find(isRecord);
  const reply = choice && isRecord(choice.message) ? choice.message : undefined;
  const assistant = reply ? chatMessage({ ...reply, role: "assistant" }, `${exchangeIndex}_r`) : null;
  return { messages, assistant, tools: chatTools(req.tools ?? req.functions) };
}
