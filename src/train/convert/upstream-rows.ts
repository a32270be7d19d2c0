// `--upstream-rows`: a recorded call read exactly as upstream's converter (0.7.x) reads it, for a user
// who must reproduce an upstream dataset. Our reading (index.ts) keeps more on purpose; upstream's:
// - a request with `messages` is read as chat whatever its dialect, so an Anthropic history's
//   tool_use blocks are lost, its tool_result blocks are user text, and its `system` is dropped;
// - content is text only (text parts joined by newlines; images and files dropped);
// - each Responses function_call item is an assistant message of its own;
// - tools are read as `{function: {...}}` or as flat `{name, description, parameters}`: an Anthropic
//   tool's `input_schema` is not read (its parameters are the empty object schema);
// - an empty argument string is wrapped as malformed, like any text that is not JSON.
// Roles, repairs, windows and checks after this are the same for both readings.

import {
  arrayOf,
  type Conversation,
  normaliseRoles,
  type Obj,
  toolDef,
} from "../../jobs-dir/conversation/common.js";
import type { Exchange } from "../../jobs-dir/exchange.js";
import { requestBody, responseBody } from "../../jobs-dir/exchange.js";
import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import { pyJson } from "../../util/py-json.js";

function text(content: unknown): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return String(content);
  const parts: string[] = [];
  for (const item of content) {
    if (typeof item === "string") parts.push(item);
    else if (isRecord(item)) {
      const t = item.text ?? item.content;
      if (typeof t === "string") parts.push(t);
    }
  }
  return parts.join("\n");
}

function args(value: unknown): string {
  const py = (v: unknown) => pyJson(v, { sortKeys: false });
  if (value == null) return "{}";
  if (isRecord(value)) return py(value);
  if (typeof value !== "string") return py({ _non_object_arguments: value });
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? value : py({ _non_object_json_arguments: parsed });
  } catch {
    return py({ _malformed_json_arguments: value });
  }
}

function call(c: Obj, index: number): ToolCall {
  const fn = isRecord(c.function) ? c.function : {};
  const id = c.id || c.tool_call_id || `call_${String(index).padStart(6, "0")}`;
  return {
    id: String(id),
    type: "function",
    function: {
      name: String(fn.name || c.name || "tool"),
      arguments: args(fn.arguments ?? c.arguments ?? {}),
    },
  };
}

function message(m: Obj, index: number): ChatMessage {
  if (m.type === "function_call") {
    const fc = { id: m.call_id || m.id, function: { name: m.name, arguments: m.arguments ?? {} } };
    return { role: "assistant", content: "", tool_calls: [call(fc, index)] };
  }
  if (m.type === "function_call_output")
    return { role: "tool", tool_call_id: String(m.call_id || m.id || ""), content: text(m.output) };
  const role = m.role ? String(m.role) : "user";
  const out: Obj = { role };
  if (role === "tool" && m.tool_call_id != null) out.tool_call_id = String(m.tool_call_id);
  out.content = text(m.content);
  const calls = m.tool_calls ?? (isRecord(m.function_call) ? [m.function_call] : undefined);
  if (Array.isArray(calls) && calls.length > 0) out.tool_calls = calls.filter(isRecord).map(call);
  return out as unknown as ChatMessage;
}

function items(list: unknown[]): ChatMessage[] {
  return list.flatMap((m, i) => (isRecord(m) && m.type !== "reasoning" ? [message(m, i)] : []));
}

function reply(res: Obj): ChatMessage | null {
  const first = arrayOf(res.choices)[0];
  if (isRecord(first) && isRecord(first.message)) return message(first.message, 0);
  if (isRecord(res.message)) return message(res.message, 0);
  if (res.content) {
    if (!Array.isArray(res.content)) return { role: "assistant", content: text(res.content) };
    const uses = res.content.filter((b) => isRecord(b) && b.type === "tool_use") as Obj[];
    const msg: ChatMessage = { role: "assistant", content: text(res.content) };
    if (uses.length > 0)
      msg.tool_calls = uses.map((b, i) =>
        call({ id: b.id, function: { name: b.name, arguments: b.input ?? {} } }, i),
      );
    return msg;
  }
  return responsesReply(res);
}

function responsesReply(res: Obj): ChatMessage | null {
  if (!Array.isArray(res.output)) return null;
  const texts: string[] = [];
  const calls: Obj[] = [];
  for (const item of res.output.filter(isRecord)) {
    if (item.type === "message") texts.push(text(item.content));
    else if (item.type === "function_call" || item.type === "tool_call")
      calls.push({
        id: item.call_id || item.id,
        function: { name: item.name, arguments: item.arguments ?? {} },
      });
  }
  if (texts.length === 0 && calls.length === 0) return null;
  const msg: ChatMessage = { role: "assistant", content: texts.filter((t) => t !== "").join("\n") };
  if (calls.length > 0) msg.tool_calls = calls.map(call);
  return msg;
}

function tools(body: Obj): ToolDef[] {
  const list = (Array.isArray(body.tools) && body.tools.length > 0 ? body.tools : body.tool_defs) ?? [];
  return arrayOf(list)
    .filter(isRecord)
    .flatMap((t) => {
      const fn = isRecord(t.function) ? t.function : t;
      const def = fn.name ? toolDef(fn.name, fn.description, fn.parameters) : null;
      return def ? [def] : [];
    });
}

export function upstreamConversationOf(ex: Exchange): Conversation {
  const req = requestBody(ex);
  const res = responseBody(ex);
  const chat = "messages" in req;
  const messages: ChatMessage[] = [];
  if (chat) messages.push(...items(arrayOf(req.messages)));
  else {
    if (req.instructions) messages.push({ role: "system", content: text(req.instructions) });
    if (typeof req.input === "string") messages.push({ role: "user", content: req.input });
    else messages.push(...items(arrayOf(req.input)));
  }
  const assistant = chat ? reply(res) : responsesReply(res);
  return { messages: normaliseRoles(messages), assistant, tools: tools(req) };
}
