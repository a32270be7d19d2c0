// A streamed exchange where the endpoint speaks the agent's own dialect (Claude Code against
// Anthropic's API): each network read goes to the agent as it came, byte for byte, while its events
// are read on the side for what the trajectory records (the Message they add up to, its usage, a
// mid-stream error).
import { errorBody, GatewayError } from "./errors.js";
import {
  Exchange,
  noteAnswer,
  noteUpstream,
  notStreamed,
  SSE_HEADERS,
  textOf,
} from "./exchange.js";
import { MessageAssembler } from "./outbound/messages-answer.js";
import { namedEvent, SseReader } from "./sse.js";
import { isObject } from "./types.js";
import type { UpstreamHeaders } from "./upstream.js";

export class PassedStream extends Exchange {
  private reader = new SseReader();
  private message = new MessageAssembler();
  private held: Buffer[] = [];
  private streaming = false;
  /** The endpoint reported an error in the stream: the agent already has it, as the endpoint sent it. */
  private reported: GatewayError | null = null;

  start(status: number, headers: UpstreamHeaders): void {
    noteUpstream(this.trace, status, headers);
    if (status >= 300 || !String(headers["content-type"] ?? "").includes("text/event-stream")) return;
    this.streaming = true;
    this.x.res.writeHead(200, SSE_HEADERS);
    this.trace.responseHeaders = SSE_HEADERS;
  }

  data(chunk: Buffer): void {
    if (!this.streaming) {
      this.held.push(chunk);
      return;
    }
    this.toAgent(chunk);
    this.read(this.reader.push(chunk));
  }

  protected complete(): void {
    if (!this.streaming) throw notStreamed(this.trace, textOf(this.held));
    this.read(this.reader.end());
    this.note();
    if (this.reported) throw this.reported;
    if (!this.message.ended)
      throw new GatewayError(502, "policy server ended the stream before finishing its answer");
    this.x.res.end();
  }

  protected failed(error: GatewayError): void {
    const { x, trace } = this;
    this.note();
    if (x.res.headersSent && !x.res.destroyed) {
      // An error event the endpoint sent has reached the agent already; the gateway's own it sends.
      if (error !== this.reported) {
        const body = errorBody("anthropic-messages", error.status, error.message) as { type: string };
        x.res.write(namedEvent(body));
      }
      x.res.end();
      trace.body = { ...(trace.body ?? {}), error: { message: error.message, status: error.status } };
    }
  }

  protected override release(): void {
    super.release();
    this.reader = null as unknown as SseReader;
    this.message = null as unknown as MessageAssembler;
    this.held = [];
  }

  private note(): void {
    noteAnswer(this.trace, { model: this.message.model(), usage: this.message.usage() });
    this.trace.body = this.message.assembled();
  }

  private read(events: string[]): void {
    for (const data of events) {
      if (this.reported) return;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        throw new GatewayError(502, `policy server sent a malformed stream event: ${data.slice(0, 200)}`);
      }
      if (!isObject(event)) continue;
      try {
        this.message.add(event);
      } catch (err) {
        // Kept for the end: the endpoint closes the stream after its error event.
        this.reported = err as GatewayError;
      }
    }
  }
}
