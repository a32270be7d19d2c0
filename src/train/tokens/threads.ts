// Which calls carry token capture, and which conversations ("threads") the calls form: grouped by
// tool set (the first is the agent, another tool set a subagent), each tool-less call a helper.
import { type Exchange, isSuccessful, requestBody, tokenCaptureOf } from "../../jobs-dir/exchange.js";
import type { CapturedCall, TokenThread } from "../../schemas/rollout-stream.js";
import { isRecord } from "../../util/jsonl.js";

const ints = (v: unknown): number[] | null =>
  Array.isArray(v) && v.every(Number.isInteger) ? (v as number[]) : null;
const nums = (v: unknown): number[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === "number") ? (v as number[]) : null;

export function capturedCall(ex: Exchange): CapturedCall | null {
  const tc = tokenCaptureOf(ex);
  if (!tc) return null;
  const completions = (Array.isArray(tc.completions) ? tc.completions : []).filter(isRecord).map((c, i) => ({
    index: typeof c.index === "number" ? c.index : i,
    token_ids: ints(c.token_ids),
    logprobs: nums(c.logprobs),
  }));
  return {
    index: ex.index,
    provider: typeof tc.provider === "string" ? tc.provider : null,
    prompt_token_ids: ints(tc.prompt_token_ids),
    completions,
    unavailable: isRecord(tc.unavailable) ? tc.unavailable : {},
  };
}

function toolNames(ex: Exchange): string[] {
  const tools = requestBody(ex).tools;
  if (!Array.isArray(tools)) return [];
  return tools
    .map((t) => (isRecord(t) ? (isRecord(t.function) ? t.function.name : t.name) : undefined))
    .filter((n): n is string => typeof n === "string")
    .sort();
}

/** Conversations: grouped by tool set (the first is the agent), each tool-less call its own helper. */
export function threadsOf(exchanges: readonly Exchange[]): TokenThread[] {
  const ok = exchanges.filter(isSuccessful);
  const named = ok.map((ex) => {
    const names = toolNames(ex);
    return { ex, key: names.join("\u0000"), tools: names.length };
  });
  if (!named.some((n) => n.tools > 0))
    return ok.length > 0 ? [{ thread: 0, kind: "chat", calls: ok.map((e) => e.index) }] : [];
  const threads: TokenThread[] = [];
  const byKey = new Map<string, TokenThread>();
  for (const { ex, key, tools } of named) {
    let thread = tools > 0 ? byKey.get(key) : undefined;
    if (!thread) {
      const kind = tools === 0 ? "helper" : byKey.size === 0 ? "agent" : "subagent";
      thread = { thread: threads.length, kind, calls: [] };
      threads.push(thread);
      if (tools > 0) byKey.set(key, thread);
    }
    thread.calls.push(ex.index);
  }
  return threads;
}
