// One model call of one trial, end to end: parse, translate to chat, enforce the model and sampling,
// add capture fields, exchange with the policy, answer the agent, and append the trajectory line.
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { TokenCaptureBlock, TrajectoryLine } from "../schemas/trajectory.js";
import { applyCapture, type CapturePlan, TokenCaptureCollector } from "./capture.js";
import type { Dialect } from "./dialect.js";
import { errorBody, GatewayError } from "./errors.js";
import { type ExchangeTrace, JSON_HEADERS, newTrace } from "./exchange.js";
import { LineBuilder, oneLine } from "./line.js";
import { plainExchange } from "./plain-exchange.js";
import { redactFixedHeaders, redactHeaders } from "./redact.js";
import type { GatewayRollout } from "./rollouts.js";
import { streamExchange } from "./stream-exchange.js";
import { ASKED_NOTHING, agentAsked } from "./strip.js";
import type { EndpointPolicy, GatewayOptions, JsonObject } from "./types.js";
import { isObject } from "./types.js";
import type { UpstreamClient } from "./upstream.js";

export interface GatewayCore {
  options: GatewayOptions;
  endpoint: EndpointPolicy;
  upstream: UpstreamClient;
  plan: CapturePlan;
}

/** Statuses that say "try again shortly": the gateway retries them before the agent sees them. */
const RETRIED_STATUSES = new Set([429, 503]);
const RETRY_BASE_MS = 500;
/** A Retry-After longer than this is not waited out: the failure goes to the agent. */
const RETRY_AFTER_CAP_MS = 10_000;

const VERSION_HEADERS = ["x-policy-version", "x-model-version", "x-weights-version"];

export async function handleCall(
  core: GatewayCore,
  dialect: Dialect,
  trial: GatewayRollout,
  exchange: { req: IncomingMessage; res: ServerResponse; raw: Buffer | null; startedAt: number },
): Promise<void> {
  const { req, res, raw, startedAt } = exchange;
  const step = trial.step;
  const requestTimestamp = new Date(Date.now() - (performance.now() - startedAt)).toISOString();
  const { upstream } = core.options;
  const capture = core.plan.enabled
    ? new TokenCaptureCollector(core.plan, dialect.wire, upstream.provider)
    : null;
  let trace = newTrace();
  let attempts = 0;
  let request: JsonObject | null = null;
  let text: string | null = null;
  let upstreamBody: JsonObject | null = null;
  let upstreamText: string | null = null;
  let error: GatewayError | null = null;
  try {
    ({ request, text } = parseRequest(raw));
    upstreamBody = upstreamRequest(core, dialect, request, trial.repeat);
    upstreamText = JSON.stringify(upstreamBody);
    const asked = dialect.wire === "openai-chat" ? agentAsked(request) : ASKED_NOTHING;
    const headers = trial.forwardHeaders;
    const input = { upstream: core.upstream, dialect, request, upstreamText, asked, capture, res, headers };
    for (;;) {
      attempts++;
      try {
        await (upstreamBody.stream === true ? streamExchange(input, trace) : plainExchange(input, trace));
        break;
      } catch (err) {
        const wait = retryDelay(core.endpoint, err, attempts, trace, res);
        if (wait === null) throw err;
        await sleep(wait);
        if (res.destroyed) throw err;
        trace = newTrace();
      }
    }
  } catch (err) {
    error =
      err instanceof GatewayError
        ? err
        : new GatewayError(500, `gateway error: ${(err as Error).message}`, null, "gateway");
    if (res.destroyed && !res.writableFinished) {
      error = new GatewayError(
        499,
        "the agent closed the connection before the answer was complete",
        null,
        "agent",
      );
    } else if (!res.headersSent) {
      const body = errorBody(dialect.wire, error.status, error.message, error.upstreamType);
      trace.responseHeaders = JSON_HEADERS;
      res.writeHead(error.status, trace.responseHeaders);
      res.end(JSON.stringify(body));
      trace.body = body;
    }
    trace.body ??= { error: { message: error.message, status: error.status } };
    capture?.fail(error.message);
  }
  const version = policyVersion(core.options, trace);
  // Dialects never change the parsed request, so its text stands for it (when it fits on one line).
  const line = new LineBuilder();
  const requestText = request && text !== null ? oneLine(text) : null;
  const metadata: TrajectoryLine["metadata"] = {
    request_model: typeof request?.model === "string" ? request.model : null,
    provider_model: `${upstream.provider}/${upstream.model}`,
    call_type: dialect.callType,
    wire: dialect.wire,
    stream: upstreamBody?.stream === true,
    input_shape: (request
      ? dialect.inputShape(request)
      : {
          has_messages: false,
          has_input: false,
          n_messages: 0,
        }) as TrajectoryLine["metadata"]["input_shape"],
    call_purpose: "agent",
    policy_version: version,
    sampling: {
      temperature: (upstreamBody?.temperature as number | undefined) ?? null,
      top_p: (upstreamBody?.top_p as number | undefined) ?? null,
      max_tokens: (upstreamBody?.max_tokens as number | undefined) ?? null,
    },
    upstream_request: upstreamBody
      ? { path: core.upstream.chatPath, body: upstreamText ? line.hold(upstreamText) : upstreamBody }
      : null,
    upstream_status: trace.upstreamStatus,
    upstream_attempts: attempts,
    fault: error ? error.fault : null,
    usage: { input_tokens: trace.inputTokens, output_tokens: trace.outputTokens },
  };
  if (capture) metadata.token_capture = capture.build() as TokenCaptureBlock;
  if (error) metadata.error = error.message;
  if (step !== null) metadata.step = step;
  trial.finish(
    line.build({
      request: {
        timestamp: requestTimestamp,
        method: req.method ?? "POST",
        path: req.url ?? "",
        headers: redactHeaders(req.headers),
        body: requestText ? line.hold(requestText) : (request ?? (raw ? raw.toString("utf8") : null)),
      },
      response: {
        timestamp: new Date().toISOString(),
        status_code: error ? error.status : 200,
        headers: redactFixedHeaders(trace.responseHeaders),
        body: trace.bodyText ? line.hold(trace.bodyText) : trace.body,
      },
      duration_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
      metadata,
    } satisfies TrajectoryLine),
    {
      failed: error !== null,
      agentClosed: error?.fault === "agent",
      fault: error ? error.fault : null,
      status: error ? error.status : 200,
      inputTokens: trace.inputTokens,
      outputTokens: trace.outputTokens,
      policyVersion: version,
      error: error ? error.message : null,
    },
  );
}

/**
 * How long to wait before trying a 429 or 503 again, or null to give up: only while retries are
 * left and nothing has reached the agent yet. Retry-After (seconds) is honoured up to a cap.
 */
function retryDelay(
  endpoint: EndpointPolicy,
  err: unknown,
  attempts: number,
  trace: ExchangeTrace,
  res: ServerResponse,
): number | null {
  if (!(err instanceof GatewayError) || err.upstreamStatus === null) return null;
  if (!RETRIED_STATUSES.has(err.upstreamStatus) || attempts > endpoint.retries) return null;
  if (res.headersSent || res.destroyed) return null;
  const backoff = RETRY_BASE_MS * 2 ** (attempts - 1);
  const header = trace.upstreamHeaders?.["retry-after"];
  const after = typeof header === "string" ? Number(header) * 1000 : Number.NaN;
  if (Number.isFinite(after) && after >= 0) return after > RETRY_AFTER_CAP_MS ? null : Math.max(after, 0);
  return backoff;
}

function parseRequest(raw: Buffer | null): { request: JsonObject; text: string } {
  if (raw === null)
    throw new GatewayError(413, "request body is over the gateway's 64 MiB limit", null, "policy");
  const text = raw.toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new GatewayError(400, `request body is not valid JSON: ${(err as Error).message}`, null, "policy");
  }
  if (!isObject(body)) throw new GatewayError(400, "request body must be a JSON object", null, "policy");
  return { request: body, text };
}

/**
 * The chat request the policy gets: the user's model and sampling win over the agent's. With a
 * seed, each member of a group samples with its own (the base plus its repeat - 1), every call.
 */
function upstreamRequest(
  core: GatewayCore,
  dialect: Dialect,
  request: JsonObject,
  repeat: number,
): JsonObject {
  const body = dialect.toChat(request);
  body.model = core.options.upstream.model;
  const { temperature, topP, maxTokens, seed } = core.options.sampling;
  if (seed !== undefined) body.seed = seed + repeat - 1;
  if (temperature !== undefined) body.temperature = temperature;
  if (topP !== undefined) body.top_p = topP;
  if (maxTokens !== undefined) {
    body.max_tokens = maxTokens;
    delete body.max_completion_tokens;
  }
  applyCapture(body, core.plan);
  if (body.stream === true) {
    const options = isObject(body.stream_options) ? body.stream_options : {};
    body.stream_options = { ...options, include_usage: true };
  } else {
    delete body.stream_options;
  }
  return body;
}

function policyVersion(options: GatewayOptions, trace: ExchangeTrace): string | null {
  if (options.policyVersion) return options.policyVersion;
  for (const name of VERSION_HEADERS) {
    const value = trace.upstreamHeaders?.[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return trace.upstreamModel;
}
