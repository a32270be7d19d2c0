// Failed calls reach the agent as an error in its own dialect, with a message that says what broke.
import type { CallFault, JsonObject, Wire } from "./types.js";

/** A call that failed: the HTTP status the agent gets and a message it can show. */
export class GatewayError extends Error {
  override name = "GatewayError";
  constructor(
    readonly status: number,
    message: string,
    /** The upstream's own error type, when it gave one. */
    readonly upstreamType: string | null = null,
    /** Failures the gateway raises about the policy server's answers are the endpoint's by default. */
    readonly fault: CallFault = "endpoint",
    /** The endpoint's own status when it answered one (a retry decision reads it). */
    readonly upstreamStatus: number | null = null,
  ) {
    super(message);
  }
}

/** Which of a rollout's bounds (GatewayBounds) a refused call went over. */
export type Bound = "request" | "answer" | "recorded";

/** A call refused for going over a bound: the agent gets the message, the rollout counts it. */
export class BoundError extends GatewayError {
  constructor(
    readonly bound: Bound,
    status: number,
    message: string,
    fault: CallFault,
  ) {
    super(status, message, null, fault);
  }
}

/** Whose fault an HTTP status from the policy server is. */
export function faultOfStatus(status: number): CallFault {
  if (status === 401 || status === 403 || status === 404) return "config";
  if (status === 408 || status === 429 || status >= 500) return "endpoint";
  if (status >= 400) return "policy";
  // A redirect or other non-2xx the client did not follow: the endpoint is not what it should be.
  return "endpoint";
}

const GOOGLE_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  504: "timeout_error",
  529: "overloaded_error",
};

function openAiType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** The error body of a failed call, shaped as the inbound dialect documents it. */
export function errorBody(
  wire: Wire,
  status: number,
  message: string,
  upstreamType?: string | null,
): JsonObject {
  if (wire === "gemini-generate-content") {
    // Google's error shape: the HTTP code, a message, and the canonical status name.
    return {
      error: {
        code: status,
        message,
        status: GOOGLE_STATUS[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT"),
      },
    };
  }
  if (wire === "anthropic-messages") {
    const type = ANTHROPIC_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message } };
  }
  const code = status === 401 ? "invalid_api_key" : null;
  return { error: { message, type: upstreamType ?? openAiType(status), param: null, code } };
}

/** Pulls a readable message out of whatever error body an upstream sent. */
export function upstreamErrorMessage(text: string): { message: string; type: string | null } {
  let message = text.trim().slice(0, 2000);
  let type: string | null = null;
  try {
    const body = JSON.parse(text) as {
      error?: unknown;
      message?: unknown;
      detail?: unknown;
      object?: unknown;
    };
    const err = body.error;
    if (typeof err === "string") message = err;
    else if (err && typeof err === "object") {
      const e = err as { message?: unknown; type?: unknown };
      if (typeof e.message === "string") message = e.message;
      if (typeof e.type === "string") type = e.type;
    } else if (typeof body.message === "string") message = body.message;
    else if (typeof body.detail === "string") message = body.detail;
  } catch {
    // not JSON: keep the text
  }
  return { message: message || "(empty body)", type };
}
