// One recorded model call (a line of llm_trajectory.jsonl, upstream's LLMExchange shape). Bodies are
// the agent's own dialect, so they are read through small guards rather than one strict schema.
import { DataError } from "../errors.js";
import { isRecord, readJsonLines } from "../util/jsonl.js";
import { inferCallPurpose } from "./call-purpose.js";

export type Wire = "openai-chat" | "openai-responses" | "anthropic-messages" | "gemini-generate-content";
type Obj = Record<string, unknown>;

export interface Exchange {
  /** Line index in llm_trajectory.jsonl (0-based, blank lines not counted). */
  index: number;
  request: Obj;
  response: Obj;
  metadata: Obj;
}

export function toExchange(value: unknown, index: number, displayPath: string): Exchange {
  if (!isRecord(value)) {
    throw new DataError(
      `${displayPath}: line ${index + 1}: expected a JSON object with request and response.`,
    );
  }
  const obj = (v: unknown): Obj => (isRecord(v) ? v : {});
  return { index, request: obj(value.request), response: obj(value.response), metadata: obj(value.metadata) };
}

/** undefined when the rollout has no llm_trajectory.jsonl (oracle, nop, no gateway). */
export async function readExchanges(file: string, displayPath: string): Promise<Exchange[] | undefined> {
  const lines = await readJsonLines(file, displayPath);
  return lines?.map((v, i) => toExchange(v, i, displayPath));
}

export function requestBody(ex: Exchange): Obj {
  return isRecord(ex.request.body) ? ex.request.body : {};
}

export function responseBody(ex: Exchange): Obj {
  return isRecord(ex.response.body) ? ex.response.body : {};
}

export function statusOf(ex: Exchange): number | null {
  const s = ex.response.status_code;
  return typeof s === "number" ? s : null;
}

/**
 * A call that reached the model and got an answer: HTTP 200, as upstream counts it (a 201 or a
 * missing status is not), and no error object in the body (a stream that failed after its 200).
 */
export function isSuccessful(ex: Exchange): boolean {
  return statusOf(ex) === 200 && !isRecord(responseBody(ex).error);
}

export function tokenCaptureOf(ex: Exchange): Obj | undefined {
  const tc = ex.metadata.token_capture;
  return isRecord(tc) ? tc : undefined;
}

/**
 * What the call was for: the recorder's `call_purpose`, else inferred from the request as upstream
 * does (OpenCode's title, summary and compaction calls; see call-purpose.ts). `agent`: the rollout's.
 */
export function callPurposeOf(ex: Exchange, agent?: string | null): string {
  const p = ex.metadata.call_purpose;
  if (typeof p === "string" && p !== "") return p;
  return inferCallPurpose(agent, isRecord(ex.request.body) ? ex.request.body : undefined);
}

/** The step of a multi-step task the call was made in (metadata.step), or null. */
export function stepOf(ex: Exchange): string | null {
  const s = ex.metadata.step;
  return typeof s === "string" && s !== "" ? s : null;
}

export function policyVersionOf(ex: Exchange): string | null {
  const v = ex.metadata.policy_version;
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  return null;
}

const WIRES: readonly string[] = [
  "openai-chat",
  "openai-responses",
  "anthropic-messages",
  "gemini-generate-content",
];

/** The dialect the agent spoke: recorded by our gateway; inferred for upstream's files, which lack it. */
export function wireOf(ex: Exchange): Wire {
  const recorded = ex.metadata.wire ?? tokenCaptureOf(ex)?.wire;
  if (typeof recorded === "string" && WIRES.includes(recorded)) return recorded as Wire;
  const path = typeof ex.request.path === "string" ? ex.request.path : "";
  if (/:(stream)?generateContent(\?|$)/i.test(path)) return "gemini-generate-content";
  if (/\/messages(\?|$)/.test(path)) return "anthropic-messages";
  if (/\/responses(\?|$)/.test(path)) return "openai-responses";
  if (path.includes("/chat/completions")) return "openai-chat";
  const req = requestBody(ex);
  const res = responseBody(ex);
  if (res.type === "message" || (typeof req.system !== "undefined" && !("input" in req)))
    return "anthropic-messages";
  // A chat `messages` list decides (OpenHands sends one, with Responses items in it, and gets a
  // Responses answer); without one, a Responses request or answer.
  if (!("messages" in req) && ("input" in req || res.object === "response")) return "openai-responses";
  return "openai-chat";
}

/** Every policy version the calls name, sorted. */
export function policyVersions(exchanges: readonly Exchange[] | undefined): string[] {
  return [...new Set((exchanges ?? []).map(policyVersionOf).filter((v): v is string => v !== null))].sort();
}

/**
 * Who made the call (metadata.origin.kind, written by the gateway from the trusted relay's word):
 * "agent", "other" (a command the agent's tools ran, or any other process in the sandbox) or
 * "unattributed" (nobody could tell: no trusted relay, an older writer).
 */
/** Why a call's samples are not the stamped policy's (the server reported another version), or null. */
export function versionMismatchOf(ex: Exchange): string | null {
  if (ex.metadata.policy_version_mismatch !== true) return null;
  const served = ex.metadata.served_policy_version;
  return `call ${ex.index} was served by policy version ${JSON.stringify(served)}, not the run's ${JSON.stringify(ex.metadata.policy_version)}`;
}

export function originKindOf(ex: Exchange): "agent" | "other" | "unattributed" {
  const o = ex.metadata.origin;
  const kind = isRecord(o) ? o.kind : undefined;
  return kind === "agent" || kind === "other" ? kind : "unattributed";
}

/**
 * The calls that may become training data: not those another process than the agent made (a
 * forged conversation, a fork of the real one posted by a shell command), unless asked for.
 */
export function trainingCalls(
  exchanges: readonly Exchange[],
  includeNonAgent = false,
): { calls: Exchange[]; nonAgent: number } {
  if (includeNonAgent) return { calls: [...exchanges], nonAgent: 0 };
  const calls = exchanges.filter((ex) => originKindOf(ex) !== "other");
  return { calls, nonAgent: exchanges.length - calls.length };
}
