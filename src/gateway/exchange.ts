// One upstream exchange, plain or streamed: send the chat request, turn the answer into the agent's
// dialect, write it to the agent, and report what happened for the trajectory line.
import type { ServerResponse } from "node:http";
import { ChatAccumulator } from "./assemble.js";
import type { TokenCaptureCollector } from "./capture.js";
import type { Dialect } from "./dialect.js";
import { GatewayError, upstreamErrorMessage } from "./errors.js";
import { SseReader } from "./sse.js";
import { type AgentAsked, removeIds, stripChunkForAgent } from "./strip.js";
import type { JsonObject } from "./types.js";
import { isObject } from "./types.js";
import { Deadline, type UpstreamAnswer, type UpstreamClient } from "./upstream.js";

export interface ExchangeInput {
  upstream: UpstreamClient;
  timeoutSec: number;
  dialect: Dialect;
  request: JsonObject;
  upstreamBody: JsonObject;
  asked: AgentAsked;
  capture: TokenCaptureCollector | null;
  res: ServerResponse;
}

/** What the trajectory line needs; filled in as the exchange goes, so a failure keeps what was known. */
export interface ExchangeTrace {
  upstreamStatus: number | null;
  upstreamHeaders: UpstreamAnswer["headers"] | null;
  upstreamModel: string | null;
  inputTokens: number;
  outputTokens: number;
  responseHeaders: Record<string, string>;
  /** The answer as the agent received it (streams assembled). */
  body: JsonObject | null;
}

export function newTrace(): ExchangeTrace {
  return {
    upstreamStatus: null,
    upstreamHeaders: null,
    upstreamModel: null,
    inputTokens: 0,
    outputTokens: 0,
    responseHeaders: {},
    body: null,
  };
}

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

export async function plainExchange(x: ExchangeInput, trace: ExchangeTrace): Promise<void> {
  const deadline = new Deadline(x.timeoutSec);
  const hangUp = () => deadline.controller.abort();
  x.res.once("close", hangUp);
  try {
    const up = await x.upstream.send(x.upstreamBody, deadline);
    noteUpstream(trace, up);
    const text = await readText(up, deadline);
    if (up.status >= 300) throw upstreamError(up.status, text);
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
    x.capture?.observe(json);
    noteAnswer(trace, json);
    const body = x.dialect.answer(json, x.request, x.asked);
    x.res.writeHead(200, JSON_HEADERS);
    x.res.end(JSON.stringify(body));
    trace.responseHeaders = JSON_HEADERS;
    trace.body = x.asked.tokenIds ? removeIds(body) : body;
  } catch (err) {
    throw x.upstream.failure(err, deadline);
  } finally {
    deadline.clear();
    x.res.off("close", hangUp);
  }
}

export async function streamExchange(x: ExchangeInput, trace: ExchangeTrace): Promise<void> {
  const deadline = new Deadline(x.timeoutSec);
  const hangUp = () => deadline.controller.abort();
  x.res.once("close", hangUp);
  const acc = new ChatAccumulator();
  const translator = x.dialect.stream(x.request, x.asked);
  let ended = false;
  // The SSE text for one upstream event; one network read's events are written to the agent at once.
  const handle = (data: string): string => {
    if (data === "[DONE]") {
      ended = true;
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
    if (chunk.error !== undefined || chunk.object === "error") {
      const { message, type } = upstreamErrorMessage(data);
      throw new GatewayError(502, `policy server reported an error mid-stream: ${message}`, type);
    }
    x.capture?.observe(chunk);
    acc.add(chunk);
    const forAgent = x.dialect.wire === "openai-chat" ? stripChunkForAgent(chunk, x.asked) : chunk;
    return forAgent ? translator.chunk(forAgent, acc) : "";
  };
  try {
    const up = await x.upstream.send(x.upstreamBody, deadline);
    noteUpstream(trace, up);
    if (up.status >= 300) throw upstreamError(up.status, await readText(up, deadline));
    const type = String(up.headers["content-type"] ?? "");
    if (!type.includes("text/event-stream")) {
      await readText(up, deadline);
      throw new GatewayError(
        502,
        `policy server did not stream (content-type ${type || "none"}) though stream was asked`,
      );
    }
    x.res.writeHead(200, SSE_HEADERS);
    trace.responseHeaders = SSE_HEADERS;
    const reader = new SseReader();
    const drain = async (events: string[]) => {
      let out = "";
      try {
        for (const data of events) out += handle(data);
      } finally {
        await write(x.res, out);
      }
    };
    for await (const bytes of up.body) {
      deadline.touch();
      await drain(reader.push(bytes));
    }
    await drain(reader.end());
    const finished = [...acc.states.values()].some((s) => s.finish !== null);
    if (!ended && !finished)
      throw new GatewayError(502, "policy server ended the stream before finishing its answer");
    x.res.end(translator.finish(acc));
    noteAnswer(trace, { model: acc.model, usage: acc.usage });
    trace.body = translator.assembled(acc);
  } catch (err) {
    const error = x.upstream.failure(err, deadline);
    noteAnswer(trace, { model: acc.model, usage: acc.usage });
    if (x.res.headersSent && !x.res.destroyed) {
      x.res.end(translator.fail(error, acc));
      trace.body = { ...translator.assembled(acc), error: { message: error.message, status: error.status } };
    }
    throw error;
  } finally {
    deadline.clear();
    x.res.off("close", hangUp);
  }
}

async function write(res: ServerResponse, text: string): Promise<void> {
  if (text === "" || res.destroyed) return;
  if (res.write(text)) return;
  await new Promise<void>((resolve) => {
    res.once("drain", resolve);
    res.once("close", resolve);
  });
}

async function readText(up: UpstreamAnswer, deadline: Deadline): Promise<string> {
  const parts: Buffer[] = [];
  for await (const bytes of up.body) {
    deadline.touch();
    parts.push(Buffer.from(bytes));
  }
  return Buffer.concat(parts).toString("utf8");
}

function upstreamError(status: number, text: string): GatewayError {
  const { message, type } = upstreamErrorMessage(text);
  return new GatewayError(status, `policy server answered ${status}: ${message}`, type);
}

function noteUpstream(trace: ExchangeTrace, up: UpstreamAnswer): void {
  trace.upstreamStatus = up.status;
  trace.upstreamHeaders = up.headers;
}

function noteAnswer(trace: ExchangeTrace, answer: JsonObject | { model: string; usage: unknown }): void {
  const model = (answer as { model?: unknown }).model;
  if (typeof model === "string" && model !== "") trace.upstreamModel = model;
  const usage = (answer as { usage?: unknown }).usage;
  if (isObject(usage)) {
    trace.inputTokens = typeof usage.prompt_tokens === "number" ? usage.prompt_tokens : 0;
    trace.outputTokens = typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0;
  }
}
