// HTTP plumbing for the scripted endpoint: request checks, OpenAI-style errors, vLLM's /v1/models body.
import { randomBytes } from "node:crypto";
import type http from "node:http";

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_TOP_LOGPROBS = 20;

export interface Problem {
  status: number;
  message: string;
  type: string;
  param?: string;
}

/** The fields of a chat request the scripted endpoint reads; everything else is accepted and ignored. */
export type ChatRequest = Record<string, unknown> & { messages: unknown[] };

export function requestProblem(
  value: unknown,
  options: { strictModel?: boolean },
  model: string,
): Problem | undefined {
  const bad = (message: string, param: string): Problem => ({
    status: 400,
    message,
    type: "BadRequestError",
    param,
  });
  if (!value || typeof value !== "object" || Array.isArray(value))
    return bad("expected a JSON object", "body");
  const body = value as Record<string, unknown>;
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return bad("messages: expected a non-empty list of messages", "messages");
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    return bad("n: the scripted policy returns one choice; leave n out or set it to 1", "n");
  }
  const top = body.top_logprobs;
  if (top !== undefined && top !== null) {
    if (typeof top !== "number" || !Number.isInteger(top) || top < 0 || top > MAX_TOP_LOGPROBS) {
      return bad(`top_logprobs: expected an integer from 0 to ${MAX_TOP_LOGPROBS}`, "top_logprobs");
    }
    if (top > 0 && body.logprobs !== true) {
      return bad("when using `top_logprobs`, `logprobs` must be set to true", "top_logprobs");
    }
  }
  if (options.strictModel && body.model !== undefined && body.model !== model) {
    return {
      status: 404,
      message: `The model \`${String(body.model)}\` does not exist.`,
      type: "NotFoundError",
      param: "model",
    };
  }
  return undefined;
}

export function modelsBody(model: string, created: number, maxModelLen: number) {
  const permission = {
    id: `modelperm-${randomBytes(8).toString("hex")}`,
    object: "model_permission",
    created,
    allow_create_engine: false,
    allow_sampling: true,
    allow_logprobs: true,
    allow_search_indices: false,
    allow_view: true,
    allow_fine_tuning: false,
    organization: "*",
    group: null,
    is_blocking: false,
  };
  const card = { id: model, object: "model", created, owned_by: "vllm", root: model, parent: null };
  return { object: "list", data: [{ ...card, max_model_len: maxModelLen, permission: [permission] }] };
}

export function errorBody(message: string, type: string, code: number, param: string | null = null) {
  return { error: { message, type, param, code } };
}

export function send(res: http.ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** A 200 server-sent-event stream, one chunked-encoding write per event, as vLLM streams. */
export function sendEvents(res: http.ServerResponse, events: readonly string[]): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  res.cork();
  for (const event of events) res.write(event);
  res.uncork();
  res.end();
}

/** Reads a request body; `tooLarge` when it passed MAX_BODY_BYTES (the rest is dropped). */
export async function readBody(req: http.IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), tooLarge: size > MAX_BODY_BYTES };
}

export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; value: string; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, value: text, error: (err as Error).message };
  }
}

export function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
