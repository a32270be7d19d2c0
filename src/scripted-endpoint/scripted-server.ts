// A deterministic stand-in for vLLM's OpenAI-compatible server: scripted replies, real HTTP, vLLM's wire
// format (token ids, logprobs, SSE), and scripted failures. The only state is a count of requests per
// conversation turn, kept for turns with transient failures (`times`); everything else is per request.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ROLLOUT_HEADERS } from "../gateway/rollouts.js";
import { promptTokenIds } from "./chat-template.js";
import {
  type ChatRequest,
  errorBody,
  flatHeaders,
  modelsBody,
  parseJson,
  readBody,
  requestProblem,
  send,
  sendEvents,
} from "./http-helpers.js";
import { messagesAnswer, messagesError } from "./messages.js";
import { PromptCache } from "./prompt-cache.js";
import { sampleTurn } from "./sample.js";
import {
  type ChosenReply,
  chooseReply,
  type EndpointScript,
  isFailure,
  openingText,
  type RolloutContext,
  repeatOf,
  type ScriptedTextReply,
  seedOf,
} from "./script.js";
import { completionBody, streamChunks, type WireRequest } from "./wire.js";

export { errorBody } from "./http-helpers.js";
export type {
  EndpointScript,
  ScriptedFailure,
  ScriptedReply,
  ScriptedTextReply,
  ScriptedToolCall,
} from "./script.js";
export { loadEndpointScript } from "./script.js";

export interface ScriptedEndpointOptions {
  script: EndpointScript;
  host?: string;
  port?: number;
  model?: string;
  tokenIds?: boolean;
  logprobs?: boolean;
  versionHeader?: string | null;
  apiKey?: string | null;
  /** Keep every request in `requests` (default true); turn off for long benchmarks. */
  recordRequests?: boolean;
  /** Answer 404 when the request names another model, as vLLM does (default false: any model is served). */
  strictModel?: boolean;
  /** Reported as max_model_len in /v1/models (default 32768). */
  maxModelLen?: number;
  /** Wait this long before answering each chat completion, standing in for GPU decoding (default 0). */
  delayMs?: number;
  /**
   * "deepseek": chat answers carry DeepSeek's prompt-cache usage fields, hits counted as it documents
   * them; Messages answers (POST /v1/messages) count cache reads and writes as Anthropic does, with any value.
   */
  promptCache?: "deepseek" | null;
}

export interface RecordedRequest {
  /** The request target as sent, query string included. */
  path: string;
  method: string;
  headers: Record<string, string>;
  /** Parsed JSON, the raw text when it is not JSON, or null when empty. */
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on arbitrary request bodies
  body: any;
}

export interface ScriptedEndpoint {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const JSON_TYPE = "application/json";

export async function startScriptedEndpoint(options: ScriptedEndpointOptions): Promise<ScriptedEndpoint> {
  const host = options.host ?? "127.0.0.1";
  const requests: RecordedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const handler = makeHandler(options, requests, hanging);
  const server = http.createServer((req, res) => {
    handler(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else {
        const body = errorBody(
          `scripted policy failed: ${(err as Error).message}`,
          "InternalServerError",
          500,
        );
        send(res, 500, JSON.stringify(body), JSON_TYPE);
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    baseUrl: `http://${urlHost}:${port}/v1`,
    requests,
    close: async () => {
      for (const res of hanging) res.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/**
 * An answer to send, or "hang" to hold the request open until the server closes. `cut`: send only that
 * much (a byte count of `text`, or the events given) and then destroy the connection.
 */
type Answer =
  | { status: number; text: string; contentType: string; cut?: number }
  | { events: string[]; cut?: true }
  | "hang";

function makeHandler(
  options: ScriptedEndpointOptions,
  requests: RecordedRequest[],
  hanging: Set<http.ServerResponse>,
) {
  const model = options.model ?? "scripted";
  const created = Math.floor(Date.now() / 1000);
  const idPrefix = randomBytes(4).toString("hex");
  let sequence = 0;
  const nextId = () => `chatcmpl-${idPrefix}${(++sequence).toString(16).padStart(8, "0")}`;
  const cache = options.promptCache ? new PromptCache() : null;
  const reached = new Map<string, number>();
  const attempts = (key: string) => {
    const seen = reached.get(key) ?? 0;
    reached.set(key, seen + 1);
    return seen;
  };

  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const { text: raw, tooLarge } = await readBody(req);
    const url = req.url ?? "/";
    const method = req.method ?? "GET";
    const parsed = parseJson(raw);
    if (options.recordRequests !== false) {
      const body = raw === "" ? null : parsed.value;
      requests.push({ path: url, method, headers: flatHeaders(req.headers), body });
    }
    if (options.versionHeader) res.setHeader("x-policy-version", options.versionHeader);
    const path = url.split("?")[0] ?? "/";
    let answer: Answer;
    if (tooLarge) answer = errorAnswer(413, "request body too large", "BadRequestError");
    else if (path === "/v1/messages") {
      // Anthropic's own API: its key header, its errors (messages.ts).
      answer =
        method !== "POST"
          ? messagesError(405, "Method Not Allowed")
          : !parsed.ok
            ? messagesError(400, `request body is not JSON: ${parsed.error}`)
            : messagesAnswer(parsed.value, req.headers, {
                script: options.script,
                apiKey: options.apiKey ?? null,
                model,
                id: `msg_${nextId().slice("chatcmpl-".length)}`,
                attempts,
                rollout: { repeat: repeatOf(req.headers[ROLLOUT_HEADERS.repeat]) },
                cache,
              });
    } else if (
      options.apiKey &&
      path.startsWith("/v1/") &&
      req.headers.authorization !== `Bearer ${options.apiKey}`
    ) {
      answer = errorAnswer(401, "Unauthorized", "AuthenticationError");
    } else if (path === "/health") answer = { status: 200, text: "", contentType: "text/plain" };
    else if (path === "/v1/models") {
      answer =
        method === "GET"
          ? jsonAnswer(200, modelsBody(model, created, options.maxModelLen ?? 32768))
          : errorAnswer(405, "Method Not Allowed", "MethodNotAllowed");
    } else if (path !== "/v1/chat/completions") {
      answer = errorAnswer(404, `Not Found: ${method} ${path}`, "NotFoundError");
    } else if (method !== "POST") answer = errorAnswer(405, "Method Not Allowed", "MethodNotAllowed");
    else if (!parsed.ok)
      answer = errorAnswer(400, `request body is not JSON: ${parsed.error}`, "BadRequestError");
    else {
      const seed = seedOf(parsed.value);
      const rollout = {
        repeat: repeatOf(req.headers[ROLLOUT_HEADERS.repeat]),
        ...(seed === undefined ? {} : { seed }),
      };
      answer = chatAnswer(parsed.value, options, { id: nextId(), model }, attempts, rollout, cache);
    }
    if (
      options.delayMs &&
      (path === "/v1/chat/completions" || path === "/v1/messages") &&
      answer !== "hang"
    ) {
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    }
    if (answer === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
    } else if ("events" in answer) {
      if (answer.cut) sendCutEvents(res, answer.events);
      else sendEvents(res, answer.events);
    } else if (answer.cut !== undefined) {
      sendCutBody(res, answer.text, answer.cut, answer.contentType);
    } else {
      send(res, answer.status, answer.text, answer.contentType);
    }
  };
}

function chatAnswer(
  body: unknown,
  options: ScriptedEndpointOptions,
  ids: { id: string; model: string },
  attempts: (key: string) => number,
  rollout: RolloutContext,
  cache: PromptCache | null,
): Answer {
  const problem = requestProblem(body, options, ids.model);
  if (problem) return errorAnswer(problem.status, problem.message, problem.type, problem.param);
  const request = body as ChatRequest;
  const chosen = chooseReply(options.script, request.messages, attempts, rollout);
  if (!chosen)
    return errorAnswer(400, noConversationMessage(request.messages), "BadRequestError", "messages");
  const reply = chosen.reply;
  if ("hang" in reply) return "hang";
  if ("fail" in reply) {
    const status = reply.fail.status;
    const text = reply.fail.body ?? JSON.stringify(errorBody("scripted failure", "ScriptedFailure", status));
    return { status, text, contentType: parseJson(text).ok ? "application/json" : "text/plain" };
  }
  const wire = wireRequest(request, options, ids);
  if (cache) wire.cacheHit = cache.hit(wire.promptIds);
  const stream = request.stream === true;
  if ("malformed" in reply) return malformedAnswer(wire, stream);
  if ("cut" in reply) return cutAnswer(wire, stream, chosen);
  const turn = sampleTurn(reply, chosen);
  if (!stream) return jsonAnswer(200, completionBody(wire, turn));
  const events = streamChunks(wire, turn).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  return { events: [...events, "data: [DONE]\n\n"] };
}

function wireRequest(
  request: ChatRequest,
  options: ScriptedEndpointOptions,
  ids: { id: string; model: string },
): WireRequest {
  const streamOptions = (request.stream_options ?? {}) as Record<string, unknown>;
  const logprobsOn = options.logprobs !== false && request.logprobs === true;
  const stream = request.stream === true;
  return {
    ...ids,
    created: Math.floor(Date.now() / 1000),
    promptIds: promptTokenIds(request.messages, Array.isArray(request.tools) ? request.tools : undefined),
    tokenIds: options.tokenIds === false ? undefined : request.return_token_ids === true,
    topLogprobs: logprobsOn ? ((request.top_logprobs as number | null | undefined) ?? 0) : null,
    sglextInput: request.return_input_ids_in_sglext === true,
    sglextOutput: request.return_output_ids_in_sglext === true,
    includeUsage: stream && streamOptions.include_usage === true,
    continuousUsage: stream && streamOptions.continuous_usage_stats === true,
  };
}

function noConversationMessage(messages: unknown[]): string {
  const text = openingText(messages);
  return `no conversation in the policy script matches the opening user messages ${JSON.stringify(text.slice(0, 120))}, and the script has no default conversation (one without "match")`;
}

// A 200 whose body does not parse: cut-off JSON, or an SSE stream that breaks off without [DONE].
function malformedAnswer(wire: WireRequest, stream: boolean): Answer {
  if (!stream) {
    return {
      status: 200,
      text: `{"id": "${wire.id}", "object": "chat.completion", "choices": [{`,
      contentType: JSON_TYPE,
    };
  }
  const head = { id: wire.id, object: "chat.completion.chunk", created: wire.created, model: wire.model };
  const broken = `data: {"id": "${wire.id}", "choices": [{"delta": {"content": "brok\n\n`;
  return { events: [`data: ${JSON.stringify({ ...head, choices: [] })}\n\n`, broken] };
}

// The beginning of the turn's answer (of "done" when that answer is itself a failure), then the
// connection is destroyed: a stream without its last chunks or [DONE], a body shorter than its length.
function cutAnswer(wire: WireRequest, stream: boolean, chosen: ChosenReply): Answer {
  const answer = chosen.answer;
  const text: ScriptedTextReply = isFailure(answer) ? { content: "done" } : answer;
  const turn = sampleTurn(text, chosen);
  if (!stream) {
    const body = JSON.stringify(completionBody(wire, turn));
    return { status: 200, text: body, contentType: JSON_TYPE, cut: Math.floor(body.length / 2) };
  }
  const chunks = streamChunks(wire, turn);
  const keep = Math.min(Math.max(2, Math.floor(chunks.length / 2)), chunks.length - 1);
  return { events: chunks.slice(0, keep).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), cut: true };
}

/** Headers and the given events of a 200 SSE stream, then the connection is destroyed. */
function sendCutEvents(res: http.ServerResponse, events: readonly string[]): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  res.flushHeaders();
  const joined = events.join("");
  res.write(joined, () => res.destroy());
}

/** A 200 that announces the whole body's length and sends only its first `bytes`, then the connection is destroyed. */
function sendCutBody(res: http.ServerResponse, text: string, bytes: number, contentType: string): void {
  res.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
  res.write(text.slice(0, bytes), () => res.destroy());
}

function jsonAnswer(status: number, value: unknown): Answer {
  return { status, text: JSON.stringify(value), contentType: JSON_TYPE };
}

function errorAnswer(status: number, message: string, type: string, param?: string): Answer {
  return jsonAnswer(status, errorBody(message, type, status, param ?? null));
}
