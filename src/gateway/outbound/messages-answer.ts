// Answers from an endpoint that speaks Anthropic Messages: a Message as a chat completion, the
// documented stream (message_start, content_block_start / _delta / _stop, message_delta,
// message_stop, ping, error) as chat chunks, and, for an Anthropic agent whose stream passes through
// unconverted, the Message its events add up to (what the trajectory records it received).
import { GatewayError, upstreamErrorMessage } from "../errors.js";
import type { ChatToolCall, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";

const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

const count = (v: Json | undefined): number => (typeof v === "number" && v > 0 ? v : 0);

/**
 * Messages usage in chat's fields: input_tokens leaves cache reads and writes out, prompt_tokens
 * counts them in; the cache fields are kept as Anthropic names them (usage.ts prices them apart).
 */
export function chatUsage(u: JsonObject): JsonObject {
  const read = count(u.cache_read_input_tokens);
  const write = count(u.cache_creation_input_tokens);
  const prompt = count(u.input_tokens) + read + write;
  const completion = count(u.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: write,
  };
}

/** A Message (non-streamed answer) as a chat completion. */
export function messageToCompletion(message: JsonObject): JsonObject {
  if (message.type === "error") {
    const { message: text, type } = upstreamErrorMessage(JSON.stringify(message));
    throw new GatewayError(502, `policy server reported an error: ${text}`, type);
  }
  const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  const text = blocks.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []));
  const thinking = blocks.flatMap((b) =>
    b.type === "thinking" && typeof b.thinking === "string" ? [b.thinking] : [],
  );
  const calls: ChatToolCall[] = blocks
    .filter((b) => b.type === "tool_use")
    .map((b) => ({
      id: String(b.id ?? ""),
      type: "function",
      function: { name: String(b.name ?? ""), arguments: JSON.stringify(b.input ?? {}) },
    }));
  const msg: JsonObject = { role: "assistant", content: text.length > 0 ? text.join("") : null };
  if (thinking.length > 0) msg.reasoning_content = thinking.join("");
  if (calls.length > 0) msg.tool_calls = calls as unknown as Json;
  return {
    id: String(message.id ?? ""),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: String(message.model ?? ""),
    choices: [{ index: 0, message: msg, finish_reason: finishOf(message.stop_reason) }],
    usage: chatUsage(isObject(message.usage) ? message.usage : {}),
  };
}

function finishOf(stop: Json | undefined): string | null {
  return typeof stop === "string" ? (FINISH[stop] ?? "stop") : null;
}

/** One stream event's failure, when it is one: Anthropic sends an `error` event mid-stream (overloaded, ...). */
export function streamEventError(event: JsonObject): GatewayError | null {
  if (event.type !== "error") return null;
  const { message, type } = upstreamErrorMessage(JSON.stringify(event));
  return new GatewayError(502, `policy server reported an error mid-stream: ${message}`, type);
}

/** Messages stream events in, chat chunks out (choice 0; tool calls numbered in their order). */
export class MessagesToChunks {
  /** message_stop arrived: the stream ended as it should. */
  ended = false;
  private id = "";
  private model = "";
  private usage: JsonObject = {};
  private readonly tools = new Map<number, number>();

  chunks(event: JsonObject): JsonObject[] {
    const failure = streamEventError(event);
    if (failure) throw failure;
    switch (event.type) {
      case "message_start": {
        const m = isObject(event.message) ? event.message : {};
        this.id = String(m.id ?? "");
        this.model = String(m.model ?? "");
        if (isObject(m.usage)) this.usage = { ...m.usage };
        return [this.chunk({ role: "assistant" })];
      }
      case "content_block_start":
        return this.blockStart(event);
      case "content_block_delta":
        return this.blockDelta(event);
      case "message_delta": {
        // Its usage is cumulative; newer answers repeat the input counts there too.
        if (isObject(event.usage)) this.usage = { ...this.usage, ...event.usage };
        const delta = isObject(event.delta) ? event.delta : {};
        const finish = finishOf(delta.stop_reason);
        return finish === null ? [] : [this.chunk({}, finish)];
      }
      case "message_stop":
        this.ended = true;
        return [{ ...this.head(), choices: [], usage: chatUsage(this.usage) }];
      default:
        return []; // ping, content_block_stop, and event types added later
    }
  }

  private blockStart(event: JsonObject): JsonObject[] {
    const block = isObject(event.content_block) ? event.content_block : {};
    const index = typeof event.index === "number" ? event.index : 0;
    if (block.type === "text" && typeof block.text === "string" && block.text !== "")
      return [this.chunk({ content: block.text })];
    if (block.type !== "tool_use") return [];
    const toolIndex = this.tools.size;
    this.tools.set(index, toolIndex);
    const call = {
      index: toolIndex,
      id: String(block.id ?? ""),
      type: "function",
      function: { name: String(block.name ?? ""), arguments: "" },
    };
    return [this.chunk({ tool_calls: [call] })];
  }

  private blockDelta(event: JsonObject): JsonObject[] {
    const delta = isObject(event.delta) ? event.delta : {};
    if (delta.type === "text_delta" && typeof delta.text === "string")
      return [this.chunk({ content: delta.text })];
    if (delta.type === "thinking_delta" && typeof delta.thinking === "string")
      return [this.chunk({ reasoning_content: delta.thinking })];
    if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
      const toolIndex = this.tools.get(typeof event.index === "number" ? event.index : 0);
      if (toolIndex === undefined || delta.partial_json === "") return [];
      return [
        this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] }),
      ];
    }
    return []; // signature_delta, citations: nothing a chat agent reads
  }

  private head(): JsonObject {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model: this.model,
    };
  }

  private chunk(delta: JsonObject, finish: string | null = null): JsonObject {
    return { ...this.head(), choices: [{ index: 0, delta, finish_reason: finish }] };
  }
}

/**
 * The Message a passed-through stream adds up to, block by block as the events built it (tool
 * input from its JSON deltas, thinking with its signature), for the trajectory.
 */
export class MessageAssembler {
  ended = false;
  private message: JsonObject | null = null;
  private readonly blocks = new Map<number, JsonObject>();
  private readonly json = new Map<number, string>();

  add(event: JsonObject): void {
    const failure = streamEventError(event);
    if (failure) throw failure;
    const index = typeof event.index === "number" ? event.index : 0;
    if (event.type === "message_start" && isObject(event.message)) this.message = { ...event.message };
    else if (event.type === "content_block_start" && isObject(event.content_block))
      this.blocks.set(index, { ...event.content_block });
    else if (event.type === "content_block_delta" && isObject(event.delta)) this.delta(index, event.delta);
    else if (event.type === "message_delta") {
      const m = this.current();
      if (isObject(event.delta)) Object.assign(m, event.delta);
      if (isObject(event.usage)) m.usage = { ...(isObject(m.usage) ? m.usage : {}), ...event.usage };
    } else if (event.type === "message_stop") this.ended = true;
  }

  /** The Message so far (a stream cut short keeps what arrived). */
  assembled(): JsonObject {
    const m = this.current();
    const content = [...this.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([i, b]) => {
        const text = this.json.get(i);
        if (text === undefined) return b;
        let input: Json = { _raw_arguments: text };
        try {
          input = JSON.parse(text === "" ? "{}" : text) as Json;
        } catch {
          // kept as text
        }
        return { ...b, input };
      });
    return { ...m, content };
  }

  model(): string {
    return typeof this.message?.model === "string" ? this.message.model : "";
  }

  usage(): JsonObject {
    const u = this.current().usage;
    return isObject(u) ? u : {};
  }

  private current(): JsonObject {
    this.message ??= { type: "message", role: "assistant" };
    return this.message;
  }

  private delta(index: number, delta: JsonObject): void {
    const block = this.blocks.get(index);
    if (!block) return;
    if (delta.type === "text_delta") block.text = `${block.text ?? ""}${delta.text ?? ""}`;
    else if (delta.type === "thinking_delta")
      block.thinking = `${block.thinking ?? ""}${delta.thinking ?? ""}`;
    else if (delta.type === "signature_delta")
      block.signature = `${block.signature ?? ""}${delta.signature ?? ""}`;
    else if (delta.type === "input_json_delta")
      this.json.set(index, `${this.json.get(index) ?? ""}${delta.partial_json ?? ""}`);
  }
}
