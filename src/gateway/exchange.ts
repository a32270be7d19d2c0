// One upstream exchange, plain or streamed: send the chat request, turn the answer into the agent's
// dialect, write it to the agent, and report what happened for the trajectory line.
import type { ServerResponse } from "node:http";
import type { TokenCaptureCollector } from "./capture.js";
import { faultOfStatus, GatewayError, upstreamErrorMessage } from "./errors.js";
import type { Dialect } from "./inbound.js";
import type { AgentAsked } from "./strip.js";
import type { JsonObject } from "./types.js";
import { isObject } from "./types.js";
import type { UpstreamCall, UpstreamClient, UpstreamHeaders, UpstreamSink } from "./upstream.js";
import { type CallTokens, NO_TOKENS, tokensOfUsage } from "./usage.js";

export interface ExchangeInput {
  upstream: UpstreamClient;
  dialect: Dialect;
  request: JsonObject;
  /** The chat request as sent upstream (JSON text). */
  upstreamText: string;
  asked: AgentAsked;
  capture: TokenCaptureCollector | null;
  res: ServerResponse;
  /** The rollout's headers sent upstream with the request (which rollout it is). */
  headers?: Record<string, string>;
  /** The agent's dialect is the endpoint's own: its answer reaches the agent as the endpoint sent it. */
  passThrough?: boolean;
}

/** What the trajectory line needs; filled in as the exchange goes, so a failure keeps what was known. */
export interface ExchangeTrace {
  upstreamStatus: number | null;
  upstreamHeaders: UpstreamHeaders | null;
  upstreamModel: string | null;
  /** The answer's token counts, its prompt cache apart (usage.ts). */
  tokens: CallTokens;
  responseHeaders: Record<string, string>;
  /** The answer as the agent received it (streams assembled). */
  body: JsonObject | null;
  /** `body` as JSON text, when the gateway already has it (the plain answer as sent). */
  bodyText: string | null;
}

// Shared, never changed: the recorded copies of these are made once (redactFixedHeaders).
const NO_HEADERS: Record<string, string> = {};

export function newTrace(): ExchangeTrace {
  return {
    upstreamStatus: null,
    upstreamHeaders: null,
    upstreamModel: null,
    tokens: NO_TOKENS,
    responseHeaders: NO_HEADERS,
    body: null,
    bodyText: null,
  };
}

export const JSON_HEADERS: Record<string, string> = { "content-type": "application/json" };
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

/**
 * One upstream call and the agent's answer, settling when the call does; an agent that hangs up stops
 * the call. Subclasses hear the policy (`start`, `data`, `end` may throw: that fails the exchange)
 * and see every failure in `failed`. A class, not closures: nothing is allocated per call but itself.
 */
export abstract class Exchange implements UpstreamSink {
  protected call: UpstreamCall | null = null;
  private settle: ((error: unknown) => void) | null = null;
  private waiting = false;
  private readonly hangUp: () => void;

  constructor(
    protected x: ExchangeInput,
    protected trace: ExchangeTrace,
  ) {
    this.hangUp = () => this.call?.abort(agentGone());
  }

  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settle = (error) => {
        this.x.res.off("close", this.hangUp);
        this.release();
        if (error === null) resolve();
        else reject(error);
      };
      this.x.res.on("close", this.hangUp);
      this.call = this.x.upstream.send(this.x.upstreamText, this, this.x.headers);
    });
  }

  /**
   * Lets go of the call's data once settled. Under load V8 may already have moved this object to
   * the old generation, where, dead, it would keep everything it points to alive (and promoted)
   * until the next full GC; measured, that doubled the gateway's GC work and memory.
   */
  protected release(): void {
    this.call = null;
    this.settle = null;
    // Typed as always set: nothing reads them once the exchange has settled.
    this.x = null as unknown as ExchangeInput;
    this.trace = null as unknown as ExchangeTrace;
  }

  /** Writes to the agent; one that reads slower than the policy writes holds the policy until it catches up. */
  protected toAgent(out: string | Buffer): void {
    const res = this.x.res;
    if (res.destroyed || res.write(out) || this.waiting) return;
    this.waiting = true;
    this.call?.pause();
    res.once("drain", () => {
      this.waiting = false;
      this.call?.resume();
    });
  }

  abstract start(status: number, headers: UpstreamHeaders): void;
  abstract data(chunk: Buffer): void;
  /** The whole answer arrived: finish the agent's answer. */
  protected abstract complete(): void;
  /** The exchange failed (before or after `complete` began). */
  protected abstract failed(error: GatewayError): void;

  end(): void {
    try {
      this.complete();
      this.settle?.(null);
    } catch (err) {
      this.failed(asGatewayError(err));
      this.settle?.(err);
    }
  }

  fail(error: GatewayError): void {
    this.failed(error);
    this.settle?.(error);
  }
}

function agentGone(): GatewayError {
  return new GatewayError(
    499,
    "the agent closed the connection before the answer was complete",
    null,
    "agent",
  );
}

export function textOf(parts: Buffer[]): string {
  if (parts.length === 1) return (parts[0] as Buffer).toString("utf8");
  return Buffer.concat(parts).toString("utf8");
}

function asGatewayError(err: unknown): GatewayError {
  return err instanceof GatewayError
    ? err
    : new GatewayError(500, `gateway error: ${(err as Error).message}`, null, "gateway");
}

export function upstreamError(status: number, text: string): GatewayError {
  const { message, type } = upstreamErrorMessage(text);
  return new GatewayError(
    status,
    `policy server answered ${status}: ${message}`,
    type,
    faultOfStatus(status),
    status,
  );
}

export function noteUpstream(trace: ExchangeTrace, status: number, headers: UpstreamHeaders): void {
  trace.upstreamStatus = status;
  trace.upstreamHeaders = headers;
}

export function noteAnswer(
  trace: ExchangeTrace,
  answer: JsonObject | { model: string; usage: unknown },
): void {
  const model = (answer as { model?: unknown }).model;
  if (typeof model === "string" && model !== "") trace.upstreamModel = model;
  const usage = (answer as { usage?: unknown }).usage;
  if (isObject(usage)) trace.tokens = tokensOfUsage(usage);
}

/** A stream was asked and none came: the endpoint's error, or an answer that is not SSE. */
export function notStreamed(trace: ExchangeTrace, text: string): GatewayError {
  const status = trace.upstreamStatus ?? 0;
  if (status >= 300) return upstreamError(status, text);
  const type = String(trace.upstreamHeaders?.["content-type"] ?? "");
  return new GatewayError(
    502,
    `policy server did not stream (content-type ${type || "none"}) though stream was asked`,
  );
}
