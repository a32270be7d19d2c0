// The policy server's chat endpoint, over one keep-alive pool, driven through undici's dispatch
// handler (no body stream, no AbortSignal per call). undici's own timeouts are off: a long generation
// is normal, so each call has two limits of its own: the first byte (a non-streamed answer's first
// byte comes only when the whole generation is done) and, once the answer started, idle time.
import type { IncomingHttpHeaders } from "node:http";
import { type Dispatcher, Pool } from "undici";
import { opt } from "../options.js";
import { BoundError, GatewayError } from "./errors.js";
import type { UpstreamWire } from "./types.js";

export type UpstreamHeaders = IncomingHttpHeaders;

/** What one call hears from the policy; `fail` comes at most once, and nothing comes after it or `end`. */
export interface UpstreamSink {
  start(status: number, headers: UpstreamHeaders): void;
  data(chunk: Buffer): void;
  end(): void;
  fail(error: GatewayError): void;
}

export interface UpstreamLimits {
  /** Seconds from sending the request to the endpoint's first byte (status line). */
  firstByteSec: number;
  /** Seconds without a byte once the answer has started. */
  idleSec: number;
  /** Bytes of one answer; more and the call is dropped (GatewayBounds.callBytes). */
  answerBytes: number;
  /** Connections to the endpoint at once (EndpointPolicy.maxConnections); calls past it queue. */
  connections?: number;
}

/** Anthropic's API version header: the one its docs pin every example to. */
export const ANTHROPIC_VERSION = "2023-06-01";

export class UpstreamClient {
  readonly chatPath: string;
  private readonly pool: Pool;
  private readonly headers: Record<string, string>;

  constructor(
    readonly baseUrl: string,
    apiKey: string | null,
    readonly limits: UpstreamLimits,
    readonly wire: UpstreamWire = "openai-chat",
  ) {
    const url = new URL(baseUrl);
    this.pool = new Pool(url.origin, {
      pipelining: 1,
      ...(limits.connections ? { connections: limits.connections } : {}),
      keepAliveTimeout: 60_000,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: 10_000 },
    });
    const base = url.pathname.replace(/\/+$/, "");
    this.headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (wire === "anthropic-messages") {
      // Anthropic's own API: /v1/messages, the key in x-api-key, the version pinned.
      this.chatPath = `${base}/messages`;
      this.headers["anthropic-version"] = ANTHROPIC_VERSION;
      if (apiKey) this.headers["x-api-key"] = apiKey;
    } else {
      this.chatPath = `${base}/chat/completions`;
      if (apiKey) this.headers.authorization = `Bearer ${apiKey}`;
    }
  }

  /** Sends one chat request body (JSON text), with the rollout's own headers; the sink hears the answer. */
  send(body: string, sink: UpstreamSink, extra?: Record<string, string>): UpstreamCall {
    const call = new UpstreamCall(this, sink);
    const headers = extra ? { ...extra, ...this.headers } : this.headers;
    this.pool.dispatch({ method: "POST", path: this.chatPath, headers, body }, call);
    return call;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** One call in flight: undici's handler, the idle deadline, and pause/resume/abort for the exchange. */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private timer: NodeJS.Timeout;
  /** When the policy last sent something (performance.now()); the timer checks it when it fires. */
  private heard: number;
  /** Whether the endpoint has sent its first byte (the idle limit applies from then on). */
  private started = false;
  private over = false;
  private received = 0;
  /** Why the exchange gave up before undici knew (abort asked before the request reached a socket). */
  private pending: GatewayError | null = null;

  constructor(
    private readonly client: UpstreamClient,
    private readonly sink: UpstreamSink,
  ) {
    this.heard = performance.now();
    this.timer = this.arm(client.limits.firstByteSec * 1000);
  }

  /** Stops the call and reports `error` to the sink (once); the connection is dropped. */
  abort(error: GatewayError): void {
    if (this.over) return;
    this.settle();
    if (this.controller) this.controller.abort(error);
    else this.pending = error;
    this.sink.fail(error);
  }

  pause(): void {
    this.controller?.pause();
  }

  resume(): void {
    this.controller?.resume();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pending) controller.abort(this.pending);
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: UpstreamHeaders): void {
    if (this.over) return;
    this.heard = performance.now();
    this.started = true;
    if (status < 200) return; // informational (100, 103): the real answer follows
    try {
      this.sink.start(status, headers);
    } catch (err) {
      this.abort(this.failure(err));
    }
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.over) return;
    this.heard = performance.now();
    this.received += chunk.length;
    if (this.received > this.client.limits.answerBytes) {
      this.abort(answerTooBig(this.client));
      return;
    }
    // A sink that throws (a malformed answer) ends the call with that error.
    try {
      this.sink.data(chunk);
    } catch (err) {
      this.abort(this.failure(err));
    }
  }

  onResponseEnd(): void {
    if (this.over) return;
    this.settle();
    this.sink.end();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.over) return;
    this.settle();
    this.sink.fail(this.failure(err));
  }

  // The timer is re-armed for what is left of the allowance, not refreshed on every chunk.
  private expire(): void {
    const left = this.allowanceSec() * 1000 - (performance.now() - this.heard);
    if (left <= 0) this.abort(this.deadlineError());
    else if (!this.over) this.timer = this.arm(left);
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.expire(), ms);
    timer.unref();
    return timer;
  }

  private settle(): void {
    this.over = true;
    clearTimeout(this.timer);
  }

  private allowanceSec(): number {
    return this.started ? this.client.limits.idleSec : this.client.limits.firstByteSec;
  }

  private deadlineError(): GatewayError {
    const seconds = this.allowanceSec();
    const what = this.started
      ? `went silent mid-answer for ${seconds} s (idle limit, ${opt("policy.idleTimeoutSec")})`
      : `sent no first byte within ${seconds} s (first-byte limit, ${opt("policy.firstByteTimeoutSec")})`;
    return new GatewayError(504, `policy server at ${this.client.baseUrl} ${what}`);
  }

  /** Turns a transport error into the error the agent sees. */
  private failure(err: unknown): GatewayError {
    if (err instanceof GatewayError) return err;
    const base = this.client.baseUrl;
    const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const code = e.code ?? e.cause?.code;
    if (!code) return new GatewayError(500, `gateway error: ${e.message ?? String(err)}`);
    if (code === "UND_ERR_SOCKET" || code === "ECONNRESET") {
      const when = this.started ? "mid-answer" : "before answering";
      return new GatewayError(502, `policy server at ${base} closed the connection ${when}`);
    }
    // The 502 is the gateway's answer to the agent; the endpoint itself never answered.
    if (code === "ECONNREFUSED") {
      return new GatewayError(
        502,
        `the endpoint ${base} never answered: connection refused (nothing listening there); start the model server or fix the base URL (${opt("policy.baseUrl")})`,
      );
    }
    const detail = [code, e.cause?.message ?? e.message].filter(Boolean).join(": ");
    return new GatewayError(
      502,
      `the endpoint ${base} never answered (${detail || "unknown error"}); check the host and port, or fix the base URL (${opt("policy.baseUrl")})`,
    );
  }
}

/** An answer over the per-call cap: the endpoint's (the run's max tokens bound what the policy writes). */
function answerTooBig(client: UpstreamClient): BoundError {
  const mib = client.limits.answerBytes / (1024 * 1024);
  return new BoundError(
    "answer",
    502,
    `policy server at ${client.baseUrl} sent an answer over the gateway's per-call cap of ${mib} MiB; raise it with ${opt("policy.maxCallMib")} if your answers are that large (top logprobs?)`,
    "endpoint",
  );
}
