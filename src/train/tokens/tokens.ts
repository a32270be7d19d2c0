// Token capture: which calls carry ids and logprobs, which conversations they form, and the merged
// training sequence of each conversation. A prompt that does not extend the previous prompt plus its
// sampled tokens breaks the merge: we report why instead of guessing an alignment.
import { type Exchange, versionMismatchOf } from "../../jobs-dir/exchange.js";
import type { CapturedCall, TokenCaptureSummary, TokenThread } from "../../schemas/rollout-stream.js";
import type { TokenSequence } from "../../schemas/train-rows.js";
import { capturedCall, threadsOf } from "./threads.js";

interface CallTokens {
  index: number;
  prompt: number[] | null;
  sampled: number[] | null;
  logprobs: number[] | null;
}

function tokensOf(call: CapturedCall | null, index: number): CallTokens {
  const first = call?.completions[0];
  return {
    index,
    prompt: call?.prompt_token_ids ?? null,
    sampled: first?.token_ids ?? null,
    logprobs: first?.logprobs ?? null,
  };
}

function incomplete(t: CallTokens): string | null {
  if (!t.prompt) return `call ${t.index} has no prompt token ids`;
  if (!t.sampled) return `call ${t.index} has no sampled token ids`;
  if (!t.logprobs) return `call ${t.index} has no logprobs`;
  if (t.logprobs.length !== t.sampled.length)
    return `call ${t.index} has ${t.sampled.length} sampled ids but ${t.logprobs.length} logprobs`;
  return null;
}

function startsWith(
  seq: readonly number[],
  prefix: readonly number[],
  offset: number,
  part: readonly number[],
): boolean {
  if (seq.length < prefix.length + part.length) return false;
  for (let i = 0; i < prefix.length; i++) if (seq[i] !== prefix[i]) return false;
  for (let i = 0; i < part.length; i++) if (seq[offset + i] !== part[i]) return false;
  return true;
}

/** Why `cur` does not continue `prev`, or null when its prompt is prev's prompt plus prev's sampled tokens. */
function prefixBreak(prev: CallTokens, cur: CallTokens): string | null {
  const pp = prev.prompt ?? [];
  const ps = prev.sampled ?? [];
  if (startsWith(cur.prompt ?? [], pp, pp.length, ps)) return null;
  return `call ${cur.index}'s prompt does not begin with call ${prev.index}'s prompt and sampled tokens`;
}

export interface TokenReport {
  summary: TokenCaptureSummary;
  calls: CapturedCall[];
  sequences: TokenSequence[] | null;
}

export function tokenReport(exchanges: readonly Exchange[] | undefined): TokenReport {
  const summary: TokenCaptureSummary = {
    status: "no_gateway_capture",
    training_grade: false,
    path: [],
    calls: exchanges?.length ?? 0,
    captured_calls: 0,
    complete_calls: 0,
    unavailable: {},
    prefix: { pairs: 0, extends_previous_call: 0, breaks: [] },
    threads: [],
  };
  if (!exchanges)
    return {
      summary: { ...summary, reason: "the rollout has no llm_trajectory.jsonl" },
      calls: [],
      sequences: null,
    };
  const calls: CapturedCall[] = [];
  const byIndex = new Map<number, CallTokens>();
  // Fail closed: samples another policy version served are not the stamped policy's.
  const mismatch = new Map<number, string>();
  const paths = new Set<string>();
  for (const ex of exchanges) {
    const call = capturedCall(ex);
    if (call) {
      calls.push(call);
      if (call.provider) paths.add(call.provider);
      for (const field of Object.keys(call.unavailable))
        summary.unavailable[field] = (summary.unavailable[field] ?? 0) + 1;
    }
    const wrongVersion = versionMismatchOf(ex);
    if (wrongVersion) mismatch.set(ex.index, wrongVersion);
    const t = tokensOf(call, ex.index);
    if (call && !incomplete(t)) summary.complete_calls++;
    byIndex.set(ex.index, t);
  }
  summary.captured_calls = calls.length;
  summary.path = [...paths].sort();
  summary.status = calls.length === 0 ? "capture_off" : "captured";
  summary.threads = threadsOf(exchanges);
  let reason: string | null = calls.length === 0 ? "no call carries a token_capture block" : null;
  if (summary.threads.length === 0) reason ??= "no call succeeded";
  const sequences: TokenSequence[] = [];
  for (const thread of summary.threads) {
    const toks = thread.calls.map((i) => byIndex.get(i) as CallTokens);
    for (const t of toks) reason ??= incomplete(t) ?? mismatch.get(t.index) ?? null;
    for (let k = 1; k < toks.length; k++) {
      const prev = toks[k - 1] as CallTokens;
      const cur = toks[k] as CallTokens;
      summary.prefix.pairs++;
      const why = prefixBreak(prev, cur);
      if (why === null) summary.prefix.extends_previous_call++;
      else
        summary.prefix.breaks.push({
          thread: thread.thread,
          call: cur.index,
          previous_call: prev.index,
          reason: why,
        });
      if (why) reason ??= why;
    }
    if (reason === null) sequences.push(mergeThread(thread, toks));
  }
  summary.training_grade = reason === null;
  if (reason !== null) summary.reason = reason;
  return { summary, calls, sequences: reason === null ? sequences : null };
}

/** Assumes every call is complete and each prompt extends the previous one (checked by the caller). */
function mergeThread(thread: TokenThread, toks: CallTokens[]): TokenSequence {
  const first = toks[0] as CallTokens;
  const seq: TokenSequence = {
    thread: thread.thread,
    kind: thread.kind,
    calls: thread.calls,
    prompt_ids: [...(first.prompt ?? [])],
    completion_ids: [],
    completion_mask: [],
    completion_logprobs: [],
  };
  let covered = first.prompt?.length ?? 0;
  toks.forEach((t, k) => {
    if (k > 0) {
      // Tokens the environment added (tool output, next user turn): context, not trained on.
      for (const id of (t.prompt ?? []).slice(covered)) {
        seq.completion_ids.push(id);
        seq.completion_mask.push(0);
        seq.completion_logprobs.push(0);
      }
    }
    const sampled = t.sampled ?? [];
    sampled.forEach((id, i) => {
      seq.completion_ids.push(id);
      seq.completion_mask.push(1);
      seq.completion_logprobs.push((t.logprobs ?? [])[i] ?? 0);
    });
    covered = (t.prompt?.length ?? 0) + sampled.length;
  });
  return seq;
}
