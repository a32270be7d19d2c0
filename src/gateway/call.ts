// One model call of one rollout, end to end: parse, translate to chat, enforce the model and sampling,
// add capture fields, exchange with the policy, answer the agent, and append the trajectory line.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { opt } from "../options.js";
import type { TokenCaptureBlock, TrajectoryLine } from "../schemas/trajectory.js";
import { applyCapture, type CapturePlan, TokenCaptureCollector } from "./capture.js";
import { BoundError, errorBody, GatewayError } from "./errors.js";
import { type ExchangeInput, type ExchangeTrace, JSON_HEADERS, newTrace } from "./exchange.js";
import { droppedFields, forwardedChat } from "./forwarded.js";
import type { Dialect } from "./inbound.js";
import { LineBuilder, oneLine } from "./line.js";
import type { CallOrigin } from "./origin.js";
import { chatToMessages, passedMessages } from "./outbound/messages-request.js";
import { plainExchange } from "./plain-exchange.js";
import { redactFixedHeaders, redactHeaders } from "./redact.js";
import type { CallOutcome, GatewayRollout } from "./rollouts.js";
import { streamExchange } from "./stream-exchange.js";
import { ASKED_NOTHING, agentAsked } from "./strip.js";
import type { EndpointPolicy, GatewayBounds, GatewayOptions, JsonObject, Wire } from "./types.js";
import { isObject } from "./types.js";
import type { UpstreamClient } from "./upstream.js";

export interface GatewayCore {
  options: GatewayOptions;
  endpoint: EndpointPolicy;
  bounds: GatewayBounds;
  /** The key origin lines are signed with, and the origin of a connection (origin.ts). */
  originKey: string;
  originOf: (socket: Socket) => CallOrigin;
  upstream: UpstreamClient;
  plan: CapturePlan;
}

/** The agent's side of one call, as the route received it. */
export interface AgentExchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request body, or null when it was over the limit. */
  raw: Buffer | null;
  /** performance.now() when the request arrived. */
  startedAt: number;
}

/**
 * Statuses that say "try again shortly" (529 is Anthropic's "overloaded"): the gateway retries them
 * before the agent sees them.
 */
const RETRIED_STATUSES = new Set([429, 503, 529]);
const RETRY_BASE_MS = 500;
/** A Retry-After longer than this is not waited out: the failure goes to the agent. */
const RETRY_AFTER_CAP_MS = 10_000;

const VERSION_HEADERS = ["x-policy-version", "x-model-version", "x-weights-version"];

/**
 * One call as it goes: what its trajectory line records, filled in step by step, so a call that
 * fails part way still records what was known when it failed.
 */
interface CallState {
  readonly requestTimestamp: string;
  /** The step the call began in: a multi-step rollout may move on before the call ends. */
  readonly step: string | null;
  readonly capture: TokenCaptureCollector | null;
  /** The agent's request, parsed, and its JSON text as sent. */
  request: JsonObject | null;
  text: string | null;
  /** The chat request sent upstream, and its JSON text. */
  upstreamBody: JsonObject | null;
  upstreamText: string | null;
  /** The last try's trace (a retry starts a fresh one). */
  trace: ExchangeTrace;
  attempts: number;
  error: GatewayError | null;
  /** The agent's request fields not forwarded (forwarded.ts). */
  dropped: string[];
}

export async function handleCall(
  core: GatewayCore,
  dialect: Dialect,
  rollout: GatewayRollout,
  exchange: AgentExchange,
): Promise<void> {
  const { res, raw, startedAt } = exchange;
  const { upstream } = core.options;
  const call: CallState = {
    requestTimestamp: new Date(Date.now() - (performance.now() - startedAt)).toISOString(),
    step: rollout.step,
    capture: core.plan.enabled ? new TokenCaptureCollector(core.plan, dialect.wire, upstream.provider) : null,
    request: null,
    text: null,
    upstreamBody: null,
    upstreamText: null,
    trace: newTrace(),
    attempts: 0,
    error: null,
    dropped: [],
  };
  try {
    refuseOverBounds(core.bounds, rollout, raw);
    const parsed = parseRequest(raw);
    call.request = parsed.request;
    call.text = parsed.text;
    call.dropped = droppedFields(dialect.wire, parsed.request);
    const upstreamBody = upstreamRequest(core, dialect, parsed.request, rollout.repeat);
    call.upstreamBody = upstreamBody;
    call.upstreamText = JSON.stringify(upstreamBody);
    const input: ExchangeInput = {
      upstream: core.upstream,
      dialect,
      request: parsed.request,
      upstreamText: call.upstreamText,
      asked: dialect.wire === "openai-chat" ? agentAsked(parsed.request) : ASKED_NOTHING,
      capture: call.capture,
      res,
      headers: rollout.forwardHeaders,
      passThrough: core.upstream.wire === "anthropic-messages" && dialect.wire === "anthropic-messages",
    };
    await exchangeWithRetries(core.endpoint, input, upstreamBody.stream === true, call);
  } catch (err) {
    call.error = answerFailure(err, dialect.wire, call.trace, res);
    call.capture?.fail(call.error.message);
  }
  recordCall(core, dialect, rollout, exchange, call);
}

/** The exchange, tried again on a 429 or 503 while retryDelay allows; each try has a fresh trace. */
async function exchangeWithRetries(
  endpoint: EndpointPolicy,
  input: ExchangeInput,
  stream: boolean,
  call: CallState,
): Promise<void> {
  for (;;) {
    call.attempts++;
    try {
      await (stream ? streamExchange(input, call.trace) : plainExchange(input, call.trace));
      return;
    } catch (err) {
      const wait = retryDelay(endpoint, err, call.attempts, call.trace, input.res);
      if (wait === null) throw err;
      await sleep(wait);
      if (input.res.destroyed) throw err;
      call.trace = newTrace();
    }
  }
}

/**
 * A failed call as the agent knows it: its fault is the agent's when the agent hung up first;
 * otherwise the agent gets the error in its own dialect, if nothing of the answer reached it yet.
 * The trace keeps a body either way, for the line.
 */
function answerFailure(err: unknown, wire: Wire, trace: ExchangeTrace, res: ServerResponse): GatewayError {
  let error =
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
    const body = errorBody(wire, error.status, error.message, error.upstreamType);
    trace.responseHeaders = JSON_HEADERS;
    res.writeHead(error.status, trace.responseHeaders);
    res.end(JSON.stringify(body));
    trace.body = body;
  }
  trace.body ??= { error: { message: error.message, status: error.status } };
  return error;
}

/** Appends the call's trajectory line to the rollout's file, and what the rollout counts of it. */
function recordCall(
  core: GatewayCore,
  dialect: Dialect,
  rollout: GatewayRollout,
  exchange: AgentExchange,
  call: CallState,
): void {
  const { req, raw, startedAt } = exchange;
  const { request, text, trace, error } = call;
  const version = policyVersion(core.options, trace);
  const line = new LineBuilder();
  // Dialects never change the parsed request, so its text stands for it (when it fits on one line).
  const requestText = request && text !== null ? oneLine(text) : null;
  const metadata = lineMetadata(core, dialect, call, version, line);
  const origin = core.originOf(req.socket);
  metadata.origin = origin;
  const value: TrajectoryLine = {
    request: {
      timestamp: call.requestTimestamp,
      method: req.method ?? "POST",
      path: req.url ?? "",
      headers: redactHeaders(req.headers),
      // A refused body is not recorded: the bound is what keeps the jobs folder small.
      body: requestText
        ? line.hold(requestText)
        : (request ?? (raw && !(error instanceof BoundError) ? raw.toString("utf8") : null)),
    },
    response: {
      timestamp: new Date().toISOString(),
      status_code: error ? error.status : 200,
      headers: redactFixedHeaders(trace.responseHeaders),
      body: trace.bodyText ? line.hold(trace.bodyText) : trace.body,
    },
    duration_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
    metadata,
  };
  rollout.finish(line.build(value), {
    ...outcomeOf(call, version),
    origin: origin.kind,
    versionMismatch: versionMismatch(core.options, trace),
  });
}

/** The line's metadata: what was asked, what went upstream, how it went. */
function lineMetadata(
  core: GatewayCore,
  dialect: Dialect,
  call: CallState,
  version: string | null,
  line: LineBuilder,
): TrajectoryLine["metadata"] {
  const { upstream } = core.options;
  const { request, upstreamBody, upstreamText, trace, error } = call;
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
      // Only when sent: most runs never set it, and older lines have no such key.
      ...(typeof upstreamBody?.reasoning_effort === "string"
        ? { reasoning_effort: upstreamBody.reasoning_effort }
        : {}),
    },
    upstream_request: upstreamBody
      ? { path: core.upstream.chatPath, body: upstreamText ? line.hold(upstreamText) : upstreamBody }
      : null,
    upstream_status: trace.upstreamStatus,
    upstream_attempts: call.attempts,
    fault: error ? error.fault : null,
    usage: {
      input_tokens: trace.tokens.input,
      output_tokens: trace.tokens.output,
      // Only when the provider reported its prompt cache: lines of servers without one keep their shape.
      ...(trace.tokens.cacheRead > 0 ? { cache_read_tokens: trace.tokens.cacheRead } : {}),
      ...(trace.tokens.cacheWrite > 0 ? { cache_write_tokens: trace.tokens.cacheWrite } : {}),
    },
  };
  if (call.capture) metadata.token_capture = call.capture.build() as TokenCaptureBlock;
  if (error) metadata.error = error.message;
  if (call.step !== null) metadata.step = call.step;
  if (call.dropped.length > 0) metadata.dropped_fields = call.dropped;
  if (error instanceof BoundError) metadata.refused = error.bound;
  const served = servedVersion(trace);
  if (served) metadata.served_policy_version = served;
  if (versionMismatch(core.options, trace)) metadata.policy_version_mismatch = true;
  return metadata;
}

/** What the rollout counts of the call (usage, and the witness's verdict). */
function outcomeOf(call: CallState, version: string | null): CallOutcome {
  const { error, trace } = call;
  return {
    failed: error !== null,
    agentClosed: error?.fault === "agent",
    fault: error ? error.fault : null,
    status: error ? error.status : 200,
    tokens: trace.tokens,
    policyVersion: version,
    error: error ? error.message : null,
    droppedFields: call.dropped,
    refused: error instanceof BoundError ? error.bound : null,
    origin: "unattributed",
    versionMismatch: false,
  };
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

/**
 * A request over the per-call cap, or one the rollout's trajectory file has no room left for, is
 * refused before it reaches the policy server: the policy drove its agent to send it.
 */
function refuseOverBounds(bounds: GatewayBounds, rollout: GatewayRollout, raw: Buffer | null): void {
  const mib = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MiB`;
  if (raw === null)
    throw new BoundError(
      "request",
      413,
      `request body is over the gateway's per-call cap of ${mib(bounds.callBytes)} (${opt("policy.maxCallMib")})`,
      "policy",
    );
  if (rollout.usage.recordedBytes + raw.length > bounds.recordedBytes)
    throw new BoundError(
      "recorded",
      413,
      `this rollout's recorded model calls reached the gateway's cap of ${mib(bounds.recordedBytes)} per rollout (${opt("policy.maxRecordedMib")}); the call was not sent`,
      "policy",
    );
}

function parseRequest(raw: Buffer | null): { request: JsonObject; text: string } {
  if (raw === null) throw new GatewayError(413, "request body is over the gateway's cap", null, "policy");
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
 * The chat request the policy gets: what the agent sent that forwarded.ts lets through, with the
 * user's model and sampling winning over the agent's. With a
 * seed, each member of a group samples with its own (the base plus its repeat - 1), every call.
 */
/**
 * The request the endpoint gets, in its own API: chat, or Messages (an Anthropic agent's request as
 * it was sent, any other agent's converted from chat).
 */
function upstreamRequest(
  core: GatewayCore,
  dialect: Dialect,
  request: JsonObject,
  repeat: number,
): JsonObject {
  if (core.upstream.wire !== "anthropic-messages") return chatRequest(core, dialect, request, repeat);
  if (dialect.wire === "anthropic-messages")
    return passedMessages(request, core.options.upstream.model, core.options.sampling);
  return chatToMessages(chatRequest(core, dialect, request, repeat));
}

function chatRequest(core: GatewayCore, dialect: Dialect, request: JsonObject, repeat: number): JsonObject {
  const body = forwardedChat(dialect.toChat(request));
  body.model = core.options.upstream.model;
  const { temperature, topP, maxTokens, seed, reasoningEffort } = core.options.sampling;
  if (reasoningEffort !== undefined) body.reasoning_effort = reasoningEffort;
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
  return options.policyVersion || servedVersion(trace) || trace.upstreamModel;
}

/** The weights version the policy server said served the call (a header), or null when it said none. */
function servedVersion(trace: ExchangeTrace): string | null {
  for (const name of VERSION_HEADERS) {
    const value = trace.upstreamHeaders?.[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return null;
}

/**
 * True when the run stamped a policy version and the server reported another: the samples are not
 * the stamped policy's (a trainer would pair them with the wrong weights), so its tokens are masked.
 */
function versionMismatch(options: GatewayOptions, trace: ExchangeTrace): boolean {
  const served = servedVersion(trace);
  return Boolean(options.policyVersion && served && served !== options.policyVersion);
}
