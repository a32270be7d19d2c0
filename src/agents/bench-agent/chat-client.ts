// The bench-agent's one model call: OpenAI chat through the rollout's gateway credential. Failures of
// the endpoint are infrastructure (provider_error); a request the policy's own conversation made too
// big is the policy's (agent_error).
import { setTimeout as sleep } from "node:timers/promises";
import { CategorizedError } from "../../errors.js";
import type { ModelAccess } from "../types.js";

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface AssistantTurn {
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  finishReason: string | null;
}

/** The policy refused the request as too big or malformed: a failure of the policy's own making. */
export class PolicyRequestError extends Error {
  override name = "PolicyRequestError";
}

const POLICY_STATUSES = new Set([400, 413, 422]);

function chatUrl(access: ModelAccess): string {
  const base = access.baseUrl.replace(/\/+$/, "");
  return base.endsWith("/v1") ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}

async function askPolicy(access: ModelAccess, body: object, signal: AbortSignal): Promise<AssistantTurn> {
  const url = chatUrl(access);
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${access.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new CategorizedError(
      "provider_error",
      `bench-agent: cannot reach the model endpoint ${url} (${detail})`,
      {
        cause: err,
      },
    );
  }
  if (status < 200 || status >= 300) {
    // The bench-agent talks to the gateway: the status is the gateway's, and its message says what
    // the endpoint did (which may be nothing at all).
    const message = `the gateway answered ${status}: ${errorText(text)}`;
    if (POLICY_STATUSES.has(status)) throw new PolicyRequestError(message);
    throw new CategorizedError("provider_error", `bench-agent: ${message}`);
  }
  return readTurn(text, url);
}

const RETRIES = 4;
const RETRY_BASE_MS = 250;

/**
 * askPolicy, retrying failures of the endpoint with backoff as real agent CLIs do: a call that
 * fails once and then succeeds is not the end of the rollout (the gateway, which sees every call,
 * ends it when the endpoint keeps failing).
 */
export async function askPolicyRetrying(
  access: ModelAccess,
  body: object,
  signal: AbortSignal,
): Promise<AssistantTurn> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await askPolicy(access, body, signal);
    } catch (err) {
      const endpoint = err instanceof CategorizedError && err.category === "provider_error";
      if (!endpoint || attempt >= RETRIES || signal.aborted) throw err;
      await sleep(RETRY_BASE_MS * 2 ** attempt, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) throw err;
    }
  }
}

function readTurn(text: string, url: string): AssistantTurn {
  let body: { choices?: { message?: Record<string, unknown>; finish_reason?: unknown }[] };
  try {
    body = JSON.parse(text);
  } catch {
    throw new CategorizedError(
      "provider_error",
      `bench-agent: ${url} answered with malformed JSON: ${text.slice(0, 200)}`,
    );
  }
  const choice = body.choices?.[0];
  if (!choice?.message)
    throw new CategorizedError("provider_error", `bench-agent: ${url} answered without a choice`);
  const m = choice.message;
  const reasoning = m.reasoning_content ?? m.reasoning;
  return {
    content: typeof m.content === "string" && m.content !== "" ? m.content : null,
    reasoning: typeof reasoning === "string" && reasoning !== "" ? reasoning : null,
    toolCalls: Array.isArray(m.tool_calls) ? (m.tool_calls as ToolCall[]) : [],
    finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
  };
}

function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === "string") return body.error;
    if (typeof body.error?.message === "string") return body.error.message;
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 500) || "(empty body)";
}
