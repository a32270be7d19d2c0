// Gemini generateContent inbound (Gemini CLI): POST .../models/{model}:generateContent answers one
// GenerateContentResponse, :streamGenerateContent?alt=sse a stream of them (`data:` events, each a
// partial response; function calls come whole, in the last one with the finish reason and usage).
// The history walk is src/dialects' (shared with train).

import {
  type GeminiStyle,
  geminiResultText,
  geminiSystem,
  geminiToolDefs,
  geminiTurns,
} from "../../dialects/gemini.js";
import type { ChatAccumulator } from "../assemble.js";
import { readCompletion } from "../assemble.js";
import { errorBody, GatewayError } from "../errors.js";
import type { Dialect, StreamTranslator } from "../inbound.js";
import { firstDelta } from "../inbound.js";
import type { ChatCompletion, ChatMessage, ChatToolCall, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";
import { toolInput } from "./anthropic-answer.js";

const CHAT_REQUEST: GeminiStyle<string | null, ChatToolCall> = {
  text: (texts, role) => (texts.length === 0 ? null : texts.join(role === "user" ? "\n" : "")),
  call: (c) => ({
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
  }),
  result: (response) => geminiResultText(response),
  idFor: (turn, n) => `call_g${turn}_${n}`,
};

export function geminiToChat(request: JsonObject, stream: boolean): JsonObject {
  if (!Array.isArray(request.contents))
    throw new GatewayError(400, "`contents` must be a list", null, "policy");
  const messages: ChatMessage[] = [];
  const system = geminiSystem(request.systemInstruction);
  if (system !== "") messages.push({ role: "system", content: system });
  messages.push(...(geminiTurns(request.contents, CHAT_REQUEST) as ChatMessage[]));
  const chat: JsonObject = { model: null, messages: messages as unknown as Json };
  const tools = geminiToolDefs(request.tools);
  if (tools.length > 0) {
    chat.tools = tools.map((fn) => ({ type: "function", function: fn })) as unknown as Json;
    const choice = toolChoice(request.toolConfig);
    if (choice !== null) chat.tool_choice = choice;
  }
  const config = isObject(request.generationConfig) ? request.generationConfig : {};
  if (typeof config.temperature === "number") chat.temperature = config.temperature;
  if (typeof config.topP === "number") chat.top_p = config.topP;
  if (typeof config.maxOutputTokens === "number") chat.max_tokens = config.maxOutputTokens;
  if (Array.isArray(config.stopSequences) && config.stopSequences.length > 0)
    chat.stop = config.stopSequences;
  chat.stream = stream;
  return chat;
}

function toolChoice(config: Json | undefined): Json | null {
  const fc = isObject(config) && isObject(config.functionCallingConfig) ? config.functionCallingConfig : null;
  if (!fc) return null;
  const only =
    Array.isArray(fc.allowedFunctionNames) && fc.allowedFunctionNames.length === 1
      ? fc.allowedFunctionNames[0]
      : null;
  if (fc.mode === "ANY")
    return typeof only === "string" ? { type: "function", function: { name: only } } : "required";
  if (fc.mode === "NONE") return "none";
  return fc.mode === "AUTO" ? "auto" : null;
}

const FINISH: Record<string, string> = {
  stop: "STOP",
  tool_calls: "STOP",
  length: "MAX_TOKENS",
  content_filter: "SAFETY",
};

function usageMetadata(c: ChatCompletion): JsonObject {
  const u = c.usage;
  const prompt = u?.prompt_tokens ?? 0;
  const out = u?.completion_tokens ?? 0;
  const meta: JsonObject = {
    promptTokenCount: prompt,
    candidatesTokenCount: out,
    totalTokenCount: prompt + out,
  };
  const cached = isObject(u?.prompt_tokens_details) ? u.prompt_tokens_details.cached_tokens : undefined;
  if (typeof cached === "number" && cached > 0) meta.cachedContentTokenCount = cached;
  return meta;
}

/** A chat answer as one GenerateContentResponse: thought, text and functionCall parts. */
function geminiResponse(c: ChatCompletion, withCalls = true, withText = true): JsonObject {
  const choice = c.choices[0];
  const parts: JsonObject[] = [];
  if (withText && choice?.message.reasoning_content)
    parts.push({ text: choice.message.reasoning_content, thought: true });
  if (withText && choice?.message.content) parts.push({ text: choice.message.content });
  if (withCalls)
    for (const call of choice?.message.tool_calls ?? [])
      parts.push({
        functionCall: { id: call.id, name: call.function.name, args: toolInput(call.function.arguments) },
      });
  const candidate: JsonObject = { content: { role: "model", parts }, index: 0 };
  const finish = choice?.finish_reason;
  if (typeof finish === "string") candidate.finishReason = FINISH[finish] ?? "STOP";
  return {
    candidates: [candidate],
    usageMetadata: usageMetadata(c),
    modelVersion: c.model,
    responseId: c.id,
  };
}

const data = (body: JsonObject): string => `data: ${JSON.stringify(body)}\r\n\r\n`;

class GeminiStream implements StreamTranslator {
  chunk(chunk: JsonObject): string {
    const delta = firstDelta(chunk);
    if (!delta) return "";
    const parts: JsonObject[] = [];
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") parts.push({ text: reasoning, thought: true });
    if (typeof delta.content === "string" && delta.content !== "") parts.push({ text: delta.content });
    if (parts.length === 0) return "";
    return data({ candidates: [{ content: { role: "model", parts }, index: 0 }] });
  }

  finish(acc: ChatAccumulator): string {
    // Gemini streams a function call whole: the calls go in the last event, with the finish reason.
    return data(geminiResponse(acc.toCompletion(), true, false));
  }

  fail(error: GatewayError): string {
    return data(errorBody("gemini-generate-content", error.status, error.message));
  }

  assembled(acc: ChatAccumulator): JsonObject {
    return geminiResponse(acc.toCompletion());
  }
}

function geminiDialect(stream: boolean): Dialect {
  return {
    wire: "gemini-generate-content",
    callType: stream ? "gemini_stream_generate_content" : "gemini_generate_content",
    toChat: (request) => geminiToChat(request, stream),
    answer: (upstream) => geminiResponse(readCompletion(upstream)),
    stream: () => new GeminiStream(),
    inputShape: (request) => ({
      has_messages: false,
      has_input: Array.isArray(request.contents),
      n_messages: Array.isArray(request.contents) ? request.contents.length : 0,
    }),
  };
}

export const geminiPlainDialect = geminiDialect(false);
export const geminiStreamDialect = geminiDialect(true);

/** The dialect of a Gemini path (`/v1beta/models/M:generateContent`, `:streamGenerateContent`), or null. */
export function geminiDialectOf(path: string): Dialect | null {
  const m = /^(?:\/v1beta|\/v1)?\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.exec(path);
  if (!m) return null;
  return m[1] === "streamGenerateContent" ? geminiStreamDialect : geminiPlainDialect;
}
