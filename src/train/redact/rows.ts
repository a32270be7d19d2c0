// Redaction of training rows as upstream applies it at export: every string of the row (messages of
// every role, tool-call arguments, tool outputs, tool definitions, metadata), then, for prime-sft,
// each tool call's JSON arguments once more as an object, so a secret held under a secret-named
// argument (`{"password": "..."}`) goes too. Arguments are rewritten only when something changed,
// so a clean row keeps its argument strings byte for byte.
import { type Exchange, requestBody, responseBody } from "../../jobs-dir/exchange.js";
import { isRecord } from "../../util/jsonl.js";
import { describeCounts, pythonJson, redactValue, type SecretCounts } from "./redact.js";

/** Where a conversion counts what it redacted (ConvertStats). */
export interface RedactionTally {
  rowsRedacted: number;
  secretsRedacted: number;
}

function redactArguments(args: string): { args: string; count: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { args, count: 0 };
  }
  if (!isRecord(parsed)) return { args, count: 0 };
  const r = redactValue(parsed);
  return r.count === 0 ? { args, count: 0 } : { args: pythonJson(r.value), count: r.count };
}

function redactToolCallArguments(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let count = 0;
  for (const m of messages) {
    if (!isRecord(m) || !Array.isArray(m.tool_calls)) continue;
    for (const call of m.tool_calls) {
      const fn = isRecord(call) ? call.function : undefined;
      if (!isRecord(fn) || typeof fn.arguments !== "string") continue;
      const r = redactArguments(fn.arguments);
      fn.arguments = r.args;
      count += r.count;
    }
  }
  return count;
}

/** The row as it is written: redacted when `redact` is on, counted in `tally`. */
export function redactRow<T extends object>(row: T, redact: boolean, tally: RedactionTally): T {
  if (!redact) return row;
  const r = redactValue(row);
  // redactValue built a fresh object, so the arguments can be rewritten in place.
  const out = r.value as Record<string, unknown>;
  let count = r.count;
  for (const field of ["messages", "prompt", "completion"]) count += redactToolCallArguments(out[field]);
  if (count > 0) {
    tally.rowsRedacted++;
    tally.secretsRedacted += count;
  }
  return out as T;
}

/**
 * A body without its logprobs blocks: they spell out the sampled tokens one by one, as
 * `{"token": "Hello"}`, which the `*token` carrier would take for a secret; the text they spell is
 * in the message itself.
 */
function withoutLogprobs(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutLogprobs);
  if (!isRecord(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !k.endsWith("logprobs"))
      .map(([k, x]) => [k, withoutLogprobs(x)]),
  );
}

/**
 * Why a tokens row cannot be written with redaction on: the text its ids came from (each call's
 * request and response: messages, system prompt, tools, reasoning) holds a secret, and ids cannot
 * be redacted. Null when the text is clean.
 */
export function secretInTokenSource(calls: readonly Exchange[]): string | null {
  for (const ex of calls) {
    for (const [side, body] of [
      ["request", requestBody(ex)],
      ["response", responseBody(ex)],
    ] as const) {
      const r = redactValue(withoutLogprobs(body));
      if (r.count > 0)
        return `call ${ex.index}'s ${side} holds ${describeCounts(r.categories as SecretCounts)}`;
    }
  }
  return null;
}
