// Shared pieces for turning any dialect into OpenAI chat messages: text joining, tool calls, tool defs.

import type { ToolStyle } from "../../dialects/index.js";
import type { ChatMessage, ToolCall, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import { pyJson } from "../../util/py-json.js";

export type Obj = Record<string, unknown>;

/** A model call seen as chat: the history the agent sent, the reply it got, and its declared tools. */
export interface Conversation {
  messages: ChatMessage[];
  assistant: ChatMessage | null;
  tools: ToolDef[];
}

const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);

/** Text parts joined; a part list with images or files is kept as it is. */
export function contentOf(content: unknown): string | unknown[] {
  if (typeof content === "string") return content;
  if (content == null) return "";
  if (!Array.isArray(content)) return JSON.stringify(content);
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (isRecord(part) && TEXT_PARTS.has(String(part.type)) && typeof part.text === "string")
      texts.push(part.text);
    else if (isRecord(part) && (part.type === "thinking" || part.type === "redacted_thinking")) continue;
    else return content;
  }
  return texts.join("\n");
}

/**
 * Arguments as a JSON string of an object, as upstream writes them: a string holding an object is kept
 * as the model wrote it; anything else is wrapped, never dropped: malformed text as
 * `_malformed_json_arguments`, JSON that is not an object as `_non_object_json_arguments`, a value
 * that is neither string nor object as `_non_object_arguments`. An object (Anthropic's tool_use
 * input) is written as Python's json.dumps writes it. Ours, on purpose: an empty string is `{}` (a
 * call without arguments), where upstream wraps it as malformed.
 */
export function argumentsOf(args: unknown): string {
  if (args === null || args === undefined) return "{}";
  if (isRecord(args)) return pyJson(args, { sortKeys: false });
  if (typeof args !== "string") return pyJson({ _non_object_arguments: args }, { sortKeys: false });
  if (args.trim() === "") return "{}";
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return pyJson({ _malformed_json_arguments: args }, { sortKeys: false });
  }
  return isRecord(parsed) ? args : pyJson({ _non_object_json_arguments: parsed }, { sortKeys: false });
}

/**
 * Arguments as an object, as trl-sft rows carry them (chat templates render them): anything that is
 * not a JSON object is wrapped under the keys argumentsOf uses, never dropped.
 */
export function argumentsObjectOf(args: unknown): Obj {
  if (isRecord(args)) return args;
  if (typeof args === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return { _malformed_json_arguments: args };
    }
    return isRecord(parsed) ? parsed : { _non_object_json_arguments: parsed };
  }
  return args === undefined || args === null ? {} : { _non_object_arguments: args };
}

/** A message as a trl-sft row holds it: each tool call's arguments as an object. */
export function withObjectArguments<M extends { tool_calls?: unknown }>(m: M): M {
  if (!Array.isArray(m.tool_calls)) return m;
  const tool_calls = m.tool_calls
    .filter(isRecord)
    .map((c) =>
      isRecord(c.function)
        ? { ...c, function: { ...c.function, arguments: argumentsObjectOf(c.function.arguments) } }
        : c,
    );
  return { ...m, tool_calls };
}

export function toolCall(id: unknown, name: unknown, args: unknown, fallbackId: string): ToolCall {
  return {
    id: typeof id === "string" && id !== "" ? id : fallbackId,
    type: "function",
    function: { name: typeof name === "string" ? name : "", arguments: argumentsOf(args) },
  };
}

export function toolDef(name: unknown, description: unknown, parameters: unknown): ToolDef | null {
  if (typeof name !== "string" || name === "") return null;
  return {
    type: "function",
    function: {
      name,
      description: typeof description === "string" ? description : "",
      parameters: isRecord(parameters) ? parameters : { type: "object", properties: {} },
    },
  };
}

export function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Roles as trainers expect them: developer is system, a late system message becomes user. */
export function normaliseRoles(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((m, i) => {
    // A message without a role is the user's, as upstream reads it.
    const role = m.role ? String(m.role) : "user";
    if (role === "developer" || role === "system") return { ...m, role: i === 0 ? "system" : "user" };
    if (role === "model") return { ...m, role: "assistant" };
    return role === m.role ? m : ({ ...m, role } as ChatMessage);
  });
}

const BANNED_MESSAGE_KEYS = [
  "reasoning_content",
  "thinking_blocks",
  "private_reasoning",
  "provider_specific_fields",
  "function_call",
  "reasoning",
  "refusal",
  "annotations",
  "audio",
];

/** A message with only the keys a row keeps (reasoning and provider extras are dropped). */
export function cleanMessage(m: Obj): ChatMessage {
  const out: Obj = {};
  for (const [k, v] of Object.entries(m)) {
    if (BANNED_MESSAGE_KEYS.includes(k) || v === undefined) continue;
    out[k] = v;
  }
  return out as ChatMessage;
}

/** A row keeps every named tool the agent declared, server and built-in tools too (their calls happened). */
export const ROW_TOOLS: ToolStyle<ToolDef> = {
  keepBuiltIn: true,
  nestedFunction: false,
  customParameters: { type: "object", properties: { input: { type: "string" } } },
  def: (t) => toolDef(t.name, t.description, t.parameters),
};
