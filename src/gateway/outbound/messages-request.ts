// Requests to an endpoint that speaks Anthropic Messages (Anthropic's own API). Two ways there:
// an Anthropic-speaking agent's request goes as it was sent (its cache_control marks, thinking
// signatures and block ids intact), cut to the fields its dialect allows, with the run's model and
// sampling over it; a chat request (what every other dialect becomes) is converted.
import { GatewayError } from "../errors.js";
import { agentFields } from "../forwarded.js";
import { toolInput } from "../inbound/anthropic-answer.js";
import type { GatewayOptions, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";

/** The Messages API requires max_tokens; a chat agent that sets none gets this (the oldest models' limit). */
export const DEFAULT_MESSAGES_MAX_TOKENS = 4096;

type Sampling = GatewayOptions["sampling"];

/**
 * The agent's Messages request as sent upstream: only its dialect's allowed fields (forwarded.ts), the run's model and
 * sampling over the agent's. Messages has no seed and no reasoning_effort: the run's are not sent
 * (the docs say so), rather than guessed at as a thinking budget.
 */
export function passedMessages(request: JsonObject, model: string, sampling: Sampling): JsonObject {
  const body: JsonObject = { model };
  for (const name of agentFields("anthropic-messages"))
    if (name !== "model" && request[name] !== undefined) body[name] = request[name] as Json;
  return withSampling(body, sampling);
}

function withSampling(body: JsonObject, sampling: Sampling): JsonObject {
  if (sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling.topP !== undefined) body.top_p = sampling.topP;
  if (sampling.maxTokens !== undefined) body.max_tokens = sampling.maxTokens;
  if (typeof body.max_tokens !== "number") body.max_tokens = DEFAULT_MESSAGES_MAX_TOKENS;
  return body;
}

/**
 * A chat request (already cut by forwardedChat, the run's model and sampling set) as a Messages
 * request: system messages become `system`, tool messages become the next user turn's tool_result
 * blocks, tool_calls become tool_use blocks, and turns of one role in a row are joined (the API
 * alternates user and assistant). Reasoning from a chat history has no signature and is left out.
 */
export function chatToMessages(chat: JsonObject): JsonObject {
  if (!Array.isArray(chat.messages)) throw new GatewayError(400, "`messages` must be a list", null, "policy");
  const system: string[] = [];
  const turns: { role: "user" | "assistant"; content: JsonObject[] }[] = [];
  const push = (role: "user" | "assistant", blocks: JsonObject[]) => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const m of chat.messages) {
    if (!isObject(m)) continue;
    if (m.role === "system" || m.role === "developer") {
      const text = plainText(m.content);
      if (text !== "") system.push(text);
    } else if (m.role === "assistant") push("assistant", assistantBlocks(m));
    else if (m.role === "tool") {
      const result: JsonObject = {
        type: "tool_result",
        tool_use_id: String(m.tool_call_id ?? ""),
        content: plainText(m.content),
      };
      push("user", [result]);
    } else push("user", userBlocks(m.content));
  }
  const body: JsonObject = { model: chat.model ?? null, messages: turns as unknown as Json };
  if (system.length > 0) body.system = system.join("\n\n");
  const tools = toolsOf(chat.tools);
  if (tools.length > 0) {
    body.tools = tools;
    const choice = toolChoice(chat.tool_choice, chat.parallel_tool_calls === false);
    if (choice) body.tool_choice = choice;
  }
  const max = chat.max_tokens ?? chat.max_completion_tokens;
  if (typeof max === "number") body.max_tokens = max;
  if (typeof chat.temperature === "number") body.temperature = chat.temperature;
  if (typeof chat.top_p === "number") body.top_p = chat.top_p;
  const stop = typeof chat.stop === "string" ? [chat.stop] : chat.stop;
  if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop;
  body.stream = chat.stream === true;
  return withSampling(body, {});
}

function plainText(content: Json | undefined): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isObject)
    .flatMap((p) => (typeof p.text === "string" ? [p.text] : []))
    .join("\n");
}

function userBlocks(content: Json | undefined): JsonObject[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isObject).flatMap((p): JsonObject[] => {
    if (typeof p.text === "string") return [{ type: "text", text: p.text }];
    const url = isObject(p.image_url) ? p.image_url.url : p.image_url;
    if (p.type === "image_url" && typeof url === "string") return [imageBlock(url)];
    return [];
  });
}

/** A data: URL is sent as base64 (as the API takes it); any other URL by reference. */
function imageBlock(url: string): JsonObject {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data)
    return { type: "image", source: { type: "base64", media_type: data[1] ?? "", data: data[2] ?? "" } };
  return { type: "image", source: { type: "url", url } };
}

function assistantBlocks(m: JsonObject): JsonObject[] {
  const blocks: JsonObject[] = [];
  const text = plainText(m.content);
  if (text !== "") blocks.push({ type: "text", text });
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  for (const call of calls) {
    if (!isObject(call) || !isObject(call.function)) continue;
    blocks.push({
      type: "tool_use",
      id: String(call.id ?? ""),
      name: String(call.function.name ?? ""),
      input: toolInput(call.function.arguments),
    });
  }
  return blocks;
}

function toolsOf(tools: Json | undefined): JsonObject[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isObject).flatMap((t): JsonObject[] => {
    const fn = isObject(t.function) ? t.function : null;
    if (!fn || typeof fn.name !== "string") return [];
    const tool: JsonObject = {
      name: fn.name,
      input_schema: isObject(fn.parameters) ? fn.parameters : { type: "object" },
    };
    if (typeof fn.description === "string") tool.description = fn.description;
    return [tool];
  });
}

function toolChoice(choice: Json | undefined, serial: boolean): JsonObject | null {
  let out: JsonObject | null = null;
  if (choice === "required") out = { type: "any" };
  else if (choice === "none") out = { type: "none" };
  else if (choice === "auto") out = { type: "auto" };
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string")
    out = { type: "tool", name: choice.function.name };
  if (serial) out = { ...(out ?? { type: "auto" }), disable_parallel_tool_use: true };
  return out;
}
