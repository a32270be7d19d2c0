// A plain (non-streamed) exchange: the policy's answer is read whole, translated, and sent to the
// agent with its length, headers and body in one write.
import { GatewayError } from "./errors.js";
import {
  Exchange,
  type ExchangeInput,
  type ExchangeTrace,
  JSON_HEADERS,
  noteAnswer,
  noteUpstream,
  textOf,
  upstreamError,
} from "./exchange.js";
import { messageToCompletion } from "./outbound/messages-answer.js";
import { removeIds } from "./strip.js";
import { isObject } from "./types.js";
import type { UpstreamHeaders } from "./upstream.js";

export function plainExchange(x: ExchangeInput, trace: ExchangeTrace): Promise<void> {
  return new PlainExchange(x, trace).run();
}

class PlainExchange extends Exchange {
  private parts: Buffer[] = [];

  start(status: number, headers: UpstreamHeaders): void {
    noteUpstream(this.trace, status, headers);
  }

  data(chunk: Buffer): void {
    this.parts.push(chunk);
  }

  protected complete(): void {
    answerPlain(this.x, this.trace, textOf(this.parts));
  }

  protected failed(): void {}

  protected override release(): void {
    super.release();
    this.parts = [];
  }
}

function answerPlain(x: ExchangeInput, trace: ExchangeTrace, text: string): void {
  const status = trace.upstreamStatus ?? 0;
  if (status >= 300) throw upstreamError(status, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new GatewayError(
      502,
      `policy server sent malformed JSON (${(err as Error).message}): ${text.slice(0, 200)}`,
    );
  }
  if (!isObject(json)) throw new GatewayError(502, "policy server sent JSON that is not an object");
  if (x.passThrough) {
    // The endpoint speaks the agent's dialect: its answer goes as it came, byte for byte.
    noteAnswer(trace, json);
    x.res.writeHead(200, { ...JSON_HEADERS, "content-length": Buffer.byteLength(text) });
    x.res.end(text);
    trace.responseHeaders = JSON_HEADERS;
    trace.body = json;
    return;
  }
  const completion = x.upstream.wire === "anthropic-messages" ? messageToCompletion(json) : json;
  x.capture?.observe(completion);
  noteAnswer(trace, completion);
  const body = x.dialect.answer(completion, x.request, x.asked);
  const out = JSON.stringify(body);
  // A known length: headers and body leave in one write, without chunked framing.
  x.res.writeHead(200, { ...JSON_HEADERS, "content-length": Buffer.byteLength(out) });
  x.res.end(out);
  trace.responseHeaders = JSON_HEADERS;
  if (x.asked.tokenIds) trace.body = removeIds(body);
  else {
    trace.body = body;
    trace.bodyText = out;
  }
}
