// OpenAI Responses: input items (messages, function calls and their outputs) become chat messages;
// consecutive calls join one assistant turn; reasoning items are dropped.

import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import { arrayOf, type Conversation, contentOf, type Obj, toolCall, toolDef } from "./common.js";

function callOf(item: Obj, fallbackId: string): ToolCall | null {
  if (item.type === "function_call")
    return toolCall(item.call_id ?? item.id, item.name, item.arguments, fallbackId);
  // Freeform tools (Codex's apply_patch) carry raw text: keep it as the one argument `input`.
  if (item.type === "custom_tool_call")
    return toolCall(item.call_id ?? item.id, item.name, { input: item.input }, fallbackId);
  return null;
}

function outputOf(item: Obj): ChatMessage | null {
  if (item.type !== "function_call_output" && item.type !== "custom_tool_call_output") return null;
  return { role: "tool", tool_call_id: String(item.call_id ?? ""), content: contentOf(item.output ?? "") };
}

/** Items in order to chat messages; a call joins the assistant turn just before it. */
function itemsToMessages(items: unknown[], where: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  items.forEach((raw, i) => {
    if (typeof raw === "string") {
      out.push({ role: "user", content: raw });
      return;
    }
    if (!isRecord(raw) || raw.type === "reasoning") return;
    const call = callOf(raw, `call_${where}_${i}`);
    if (call) {
      const last = out[out.length - 1];
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: "assistant", content: "", tool_calls: [call] });
      return;
    }
    const output = outputOf(raw);
    if (output) {
      out.push(output);
      return;
    }
    if (raw.type === undefined || raw.type === "message") {
      out.push({ role: String(raw.role ?? "user") as ChatMessage["role"], content: contentOf(raw.content) });
    }
  });
  return out;
}

export function responsesTools(tools: unknown): ToolDef[] {
  const out: ToolDef[] = [];
  for (const t of arrayOf(tools)) {
    if (!isRecord(t)) continue;
    const fn = isRecord(t.function) ? t.function : t;
    const params =
      t.type === "custom" ? { type: "object", properties: { input: { type: "string" } } } : fn.parameters;
    const def = toolDef(fn.name, fn.description, params);
    if (def) out.push(def);
  }
  return out;
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
