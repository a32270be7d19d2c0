// A dialect is what an agent speaks inbound. Every dialect goes upstream as OpenAI chat; these are the
// two translations (request to chat, chat answer back) and the stream translator for SSE answers.
// inbound/ holds one per API an agent speaks; the history conversions they share with train, which
// only read, are src/dialects/.
import type { ChatAccumulator } from "./assemble.js";
import type { GatewayError } from "./errors.js";
import type { AgentAsked } from "./strip.js";
import { isObject, type JsonObject, type Wire } from "./types.js";

export interface StreamTranslator {
  /** SSE text for one upstream chunk ("" when the agent gets nothing from it). */
  chunk(chunk: JsonObject, acc: ChatAccumulator): string;
  /** SSE text that ends a stream that went well. */
  finish(acc: ChatAccumulator): string;
  /** SSE text that ends a stream that broke after the agent got its headers. */
  fail(error: GatewayError, acc: ChatAccumulator): string;
  /** The answer as the agent received it, assembled into one body (for the trajectory). */
  assembled(acc: ChatAccumulator): JsonObject;
}

export interface Dialect {
  readonly wire: Wire;
  /** Upstream's LiteLLM call type, kept for readers of llm_trajectory.jsonl. */
  readonly callType: string;
  /** The agent's request as a chat request; model, sampling and capture fields are set afterwards. */
  toChat(request: JsonObject): JsonObject;
  /** The agent's answer for a plain (non-streamed) call. */
  answer(upstream: JsonObject, request: JsonObject, asked: AgentAsked): JsonObject;
  stream(request: JsonObject, asked: AgentAsked): StreamTranslator;
  inputShape(request: JsonObject): JsonObject;
}

export function randomId(prefix: string): string {
  const hex = Array.from({ length: 24 }, () => Math.floor(Math.random() * 16).toString(16)).join("");
  return `${prefix}${hex}`;
}

/** The delta of choice 0 in a streamed chat chunk, or null; the translators only ever speak for choice 0. */
export function firstDelta(chunk: JsonObject): JsonObject | null {
  const choice = Array.isArray(chunk.choices)
    ? chunk.choices.find((c) => isObject(c) && (c.index ?? 0) === 0)
    : null;
  return isObject(choice) && isObject(choice.delta) ? choice.delta : null;
}

/** upstream's `input_shape` for dialects whose conversation is a `messages` list (chat, Anthropic). */
export function messagesInputShape(request: JsonObject): JsonObject {
  const messages = request.messages;
  return {
    has_messages: Array.isArray(messages),
    has_input: false,
    n_messages: Array.isArray(messages) ? messages.length : 0,
  };
}
