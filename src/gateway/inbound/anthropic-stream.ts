// Anthropic Messages streaming: chat chunks in, the documented event flow out (one content block per
// thinking run, text run or tool call, numbered from 0).
import type { ChatAccumulator } from "../assemble.js";
import { errorBody, type GatewayError } from "../errors.js";
import type { StreamTranslator } from "../inbound.js";
import { firstDelta, randomId } from "../inbound.js";
import { namedEvent } from "../sse.js";
import type { Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";
import { messageObject, stopOf, usageOf } from "./anthropic-answer.js";

export class AnthropicStream implements StreamTranslator {
  private readonly id = randomId("msg_");
  private started = false;
  private blocks = 0;
  private open: { kind: "thinking" | "text" | "tool"; index: number; toolIndex?: number } | null = null;
  private readonly toolIds = new Map<number, string>();

  constructor(private readonly request: JsonObject) {}

  chunk(chunk: JsonObject, acc: ChatAccumulator): string {
    let out = this.start(acc);
    const delta = firstDelta(chunk);
    if (!delta) return out;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") {
      out += this.ensure("thinking", { type: "thinking", thinking: "", signature: "" });
      out += this.delta({ type: "thinking_delta", thinking: reasoning });
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      out += this.ensure("text", { type: "text", text: "" });
      out += this.delta({ type: "text_delta", text: delta.content });
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) out += this.tool(call);
    return out;
  }

  finish(acc: ChatAccumulator): string {
    const c = acc.toCompletion();
    const stop = stopOf(c.choices[0], this.request);
    const usage = usageOf(c);
    return (
      this.start(acc) +
      this.close() +
      namedEvent({
        type: "message_delta",
        delta: { stop_reason: stop.reason, stop_sequence: stop.sequence },
        usage: { input_tokens: usage.input_tokens as number, output_tokens: usage.output_tokens as number },
      }) +
      namedEvent({ type: "message_stop" })
    );
  }

  fail(error: GatewayError, acc: ChatAccumulator): string {
    const body = errorBody("anthropic-messages", error.status, error.message) as { type: string };
    return this.start(acc) + this.close() + namedEvent(body);
  }

  assembled(acc: ChatAccumulator): JsonObject {
    return messageObject(acc.toCompletion(), this.request, this.id, this.toolIds);
  }

  private start(acc: ChatAccumulator): string {
    if (this.started) return "";
    this.started = true;
    const message = {
      id: this.id,
      type: "message",
      role: "assistant",
      model: acc.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: acc.usage?.prompt_tokens ?? 0, output_tokens: 0 },
    };
    return namedEvent({ type: "message_start", message });
  }

  private ensure(kind: "thinking" | "text", block: JsonObject): string {
    if (this.open?.kind === kind) return "";
    const out = this.close();
    this.open = { kind, index: this.blocks++ };
    return out + namedEvent({ type: "content_block_start", index: this.open.index, content_block: block });
  }

  private delta(delta: JsonObject): string {
    return namedEvent({ type: "content_block_delta", index: this.open?.index ?? 0, delta });
  }

  private tool(raw: Json): string {
    if (!isObject(raw)) return "";
    const toolIndex = typeof raw.index === "number" ? raw.index : 0;
    const fn = isObject(raw.function) ? raw.function : {};
    let out = "";
    if (!this.toolIds.has(toolIndex)) {
      out += this.close();
      const id = typeof raw.id === "string" && raw.id !== "" ? raw.id : randomId("toolu_");
      this.toolIds.set(toolIndex, id);
      this.open = { kind: "tool", index: this.blocks++, toolIndex };
      const block = { type: "tool_use", id, name: String(fn.name ?? ""), input: {} };
      out += namedEvent({ type: "content_block_start", index: this.open.index, content_block: block });
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "" && this.open?.toolIndex === toolIndex) {
      out += this.delta({ type: "input_json_delta", partial_json: fn.arguments });
    }
    return out;
  }

  private close(): string {
    if (!this.open) return "";
    const index = this.open.index;
    this.open = null;
    return namedEvent({ type: "content_block_stop", index });
  }
}
