// `--context-policy message-window`: a trl-sft row that is longer than --max-length tokens keeps
// what the target completion cannot do without (the leading system messages, the task's user
// message, the completion itself) and the longest run of recent turns that fits, each assistant
// message with the tool results that answer it, so no tool result loses its call. A row whose
// required part does not fit is an error: nothing is ever cut mid-message.

import { opt } from "../../options.js";
import type { ChatMessage } from "../../schemas/train-rows.js";
import { rowLength, rowTokens, TokenizationError, type TrlConversation } from "./count.js";
import type { LoadedTokenizer } from "./load.js";

export interface ContextWindow {
  policy: "message-window";
  original_messages: number;
  retained_messages: number;
  messages_dropped: number;
  original_tokens: number;
  final_tokens: number;
  max_length: number;
  tokenizer: string;
  tokenizer_revision: string | null;
}

/** The manifest's totals over every windowed row. */
export interface WindowTotals {
  rows_compacted: number;
  messages_dropped: number;
  max_original_tokens: number;
  max_final_tokens: number;
}

export const NO_WINDOW: WindowTotals = {
  rows_compacted: 0,
  messages_dropped: 0,
  max_original_tokens: 0,
  max_final_tokens: 0,
};

/** The leading system messages and the first user message after them: never dropped. */
function requiredPrefix(prompt: ChatMessage[]): number {
  let end = 0;
  while (end < prompt.length && prompt[end]?.role === "system") end++;
  const firstUser = prompt.findIndex((m, i) => i >= end && m.role === "user");
  if (firstUser >= 0) return firstUser + 1;
  // No task message at all: keep the first message so the prompt is never empty.
  return end === 0 ? Math.min(1, prompt.length) : end;
}

/** Turns that go together: an assistant message with the tool results after it; any other message alone. */
function turns(messages: ChatMessage[]): ChatMessage[][] {
  const out: ChatMessage[][] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (m.role === "tool" && last && last[0]?.role === "assistant") last.push(m);
    else out.push([m]);
  }
  return out;
}

export class MessageWindow {
  readonly totals: WindowTotals = { ...NO_WINDOW };

  constructor(
    readonly tokenizer: LoadedTokenizer,
    readonly maxLength: number,
  ) {}

  /** The row as it trains within --max-length, with its `context_window` block; `where` names it in errors. */
  fit<R extends TrlConversation>(row: R, where: string): R & { context_window: ContextWindow } {
    try {
      return this.fitRow(row);
    } catch (err) {
      if (err instanceof TokenizationError) throw new TokenizationError(`${where}: ${err.message}`);
      throw err;
    }
  }

  private fitRow<R extends TrlConversation>(row: R): R & { context_window: ContextWindow } {
    const original = rowTokens(this.tokenizer, row, null).tokens;
    let prompt = row.prompt;
    let final = original;
    if (original > this.maxLength) {
      const keep = requiredPrefix(row.prompt);
      const prefix = row.prompt.slice(0, keep);
      const tail = turns(row.prompt.slice(keep));
      const withRecent = (k: number) => [...prefix, ...tail.slice(tail.length - k).flat()];
      // The most recent turns that fit, newest first: what is kept is contiguous, never an older turn
      // past one that did not fit. A rendered conversation only grows as turns are added in front, so
      // the count is found by halving (a few renders of a long row, not one per turn).
      let lo = 0;
      let hi = tail.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (rowLength(this.tokenizer, { ...row, prompt: withRecent(mid) }) <= this.maxLength) lo = mid;
        else hi = mid - 1;
      }
      const kept = tail.slice(tail.length - lo).flat();
      if (tail.length > 0 && kept.length === 0) {
        throw new TokenizationError(
          `most recent assistant/tool context group does not fit max_length ${this.maxLength} with the ` +
            `required system and task prefix (the row has ${original} tokens); raise ${opt("maxLength")} or ` +
            "leave this row out",
        );
      }
      prompt = [...prefix, ...kept];
      // The kept row must still tokenize cleanly and fit (with no tail, the prefix alone may not).
      final = rowTokens(this.tokenizer, { ...row, prompt }, this.maxLength).tokens;
    }
    const dropped = row.prompt.length - prompt.length;
    if (dropped > 0) this.totals.rows_compacted++;
    this.totals.messages_dropped += dropped;
    this.totals.max_original_tokens = Math.max(this.totals.max_original_tokens, original);
    this.totals.max_final_tokens = Math.max(this.totals.max_final_tokens, final);
    return {
      ...row,
      prompt,
      context_window: {
        policy: "message-window",
        original_messages: row.prompt.length,
        retained_messages: prompt.length,
        messages_dropped: dropped,
        original_tokens: original,
        final_tokens: final,
        max_length: this.maxLength,
        tokenizer: this.tokenizer.id,
        tokenizer_revision: this.tokenizer.revision,
      },
    };
  }
}
