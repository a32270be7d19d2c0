// A streamed exchange: the policy's SSE chunks are translated and written to the agent as they arrive,
// one write per network read; the last read's events and the stream's end usually leave in one write.
import { ChatAccumulator } from "./assemble.js";
import { GatewayError, upstreamErrorMessage } from "./errors.js";
import {
  Exchange,
  type ExchangeInput,
  type ExchangeTrace,
  noteAnswer,
  noteUpstream,
  notStreamed,
  SSE_HEADERS,
  textOf,
} from "./exchange.js";
import type { StreamTranslator } from "./inbound.js";
import { MessagesToChunks } from "./outbound/messages-answer.js";
import { PassedStream } from "./passed-stream.js";
import { SseReader } from "./sse.js";
import { stripChunkForAgent } from "./strip.js";
import { isObject, type JsonObject } from "./types.js";
import type { UpstreamHeaders } from "./upstream.js";

export function streamExchange(x: ExchangeInput, trace: ExchangeTrace): Promise<void> {
  return (x.passThrough ? new PassedStream(x, trace) : new StreamExchange(x, trace)).run();
}

class StreamExchange extends Exchange {
  private acc = new ChatAccumulator();
  private translator: StreamTranslator;
  private reader = new SseReader();
  private readonly chat: boolean;
  /** The endpoint streams Messages events: they become chat chunks first. */
  private messages: MessagesToChunks | null;
  /** A non-streamed answer (an upstream error, or JSON where SSE was asked) is read whole. */
  private held: Buffer[] = [];
  private streaming = false;
  private ended = false;

  constructor(x: ExchangeInput, trace: ExchangeTrace) {
    super(x, trace);
    this.translator = x.dialect.stream(x.request, x.asked);
    this.chat = x.dialect.wire === "openai-chat";
    this.messages = x.upstream.wire === "anthropic-messages" ? new MessagesToChunks() : null;
  }

  start(status: number, headers: UpstreamHeaders): void {
    noteUpstream(this.trace, status, headers);
    if (status >= 300 || !String(headers["content-type"] ?? "").includes("text/event-stream")) return;
    this.streaming = true;
    this.x.res.writeHead(200, SSE_HEADERS);
    this.trace.responseHeaders = SSE_HEADERS;
  }

  data(chunk: Buffer): void {
    if (this.streaming) this.forward(this.reader.push(chunk));
    else this.held.push(chunk);
  }

  protected complete(): void {
    if (!this.streaming) throw notStreamed(this.trace, textOf(this.held));
    this.forward(this.reader.end());
    const { acc, trace } = this;
    const finished = [...acc.states.values()].some((s) => s.finish !== null);
    if (!this.ended && !this.messages?.ended && !finished)
      throw new GatewayError(502, "policy server ended the stream before finishing its answer");
    this.x.res.end(this.translator.finish(acc));
    noteAnswer(trace, { model: acc.model, usage: acc.usage });
    trace.body = this.translator.assembled(acc);
  }

  protected failed(error: GatewayError): void {
    const { acc, trace, x } = this;
    noteAnswer(trace, { model: acc.model, usage: acc.usage });
    if (x.res.headersSent && !x.res.destroyed) {
      x.res.end(this.translator.fail(error, acc));
      const body = this.translator.assembled(acc);
      trace.body = { ...body, error: { message: error.message, status: error.status } };
    }
  }

  protected override release(): void {
    super.release();
    // See Exchange.release: nothing reads these once the exchange has settled.
    this.acc = null as unknown as ChatAccumulator;
    this.translator = null as unknown as StreamTranslator;
    this.reader = null as unknown as SseReader;
    this.messages = null;
    this.held = [];
  }

  /** One network read's events go to the agent in one write, even when a later one is malformed. */
  private forward(events: string[]): void {
    let out = "";
    try {
      for (const data of events) out += this.event(data);
    } finally {
      if (out !== "") this.toAgent(out);
    }
  }

  /** The SSE text for one upstream event. */
  private event(data: string): string {
    if (data === "[DONE]") {
      this.ended = true;
      return "";
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new GatewayError(502, `policy server sent a malformed stream chunk: ${data.slice(0, 200)}`);
    }
    if (!isObject(chunk))
      throw new GatewayError(502, "policy server sent a stream chunk that is not an object");
    if (this.messages) {
      let out = "";
      for (const c of this.messages.chunks(chunk)) out += this.chatChunk(c);
      return out;
    }
    if (chunk.error !== undefined || chunk.object === "error") {
      const { message, type } = upstreamErrorMessage(data);
      throw new GatewayError(502, `policy server reported an error mid-stream: ${message}`, type);
    }
    return this.chatChunk(chunk);
  }

  private chatChunk(chunk: JsonObject): string {
    this.x.capture?.observe(chunk);
    this.acc.add(chunk);
    const forAgent = this.chat ? stripChunkForAgent(chunk, this.x.asked) : chunk;
    return forAgent ? this.translator.chunk(forAgent, this.acc) : "";
  }
}
