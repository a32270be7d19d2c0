// `bench train validate --format trl-sft --tokenizer T [--max-length N]`: every row rendered and
// tokenized as the trainer will, proving its completion still has tokens to learn from and that it
// fits; the report's `tokenization` block gives the spread of lengths.
import type { ChatMessage } from "../../schemas/train-rows.js";
import { rowTokens, TokenizationError } from "../tokenizer/count.js";
import type { LoadedTokenizer } from "../tokenizer/load.js";

export interface TokenizationSummary {
  tokenizer: string;
  tokenizer_revision: string | null;
  max_length: number | null;
  min_tokens: number;
  median_tokens: number;
  p95_tokens: number;
  max_tokens: number;
  min_trainable_assistant_tokens: number;
}

export class TokenizationCheck {
  private readonly lengths: number[] = [];
  private minTrainable = Number.POSITIVE_INFINITY;

  constructor(
    readonly tokenizer: LoadedTokenizer,
    readonly maxLength: number | null,
  ) {}

  /** The row's problem as a sentence, or null. Only rows that passed the structural checks come here. */
  check(row: Record<string, unknown>): string | null {
    try {
      const t = rowTokens(
        this.tokenizer,
        {
          prompt: row.prompt as ChatMessage[],
          completion: row.completion as ChatMessage[],
          tools: Array.isArray(row.tools) ? row.tools : [],
        },
        this.maxLength,
      );
      this.lengths.push(t.tokens);
      this.minTrainable = Math.min(this.minTrainable, t.trainable);
      return null;
    } catch (err) {
      if (err instanceof TokenizationError) return err.message;
      throw err;
    }
  }

  /** null when no row was measured (upstream then leaves the block out). */
  summary(): TokenizationSummary | null {
    if (this.lengths.length === 0) return null;
    const sorted = [...this.lengths].sort((a, b) => a - b);
    const n = sorted.length;
    const mid = Math.floor(n / 2);
    // Python's statistics.median: the mean of the two middle values when n is even.
    const median =
      n % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
    return {
      tokenizer: this.tokenizer.id,
      tokenizer_revision: this.tokenizer.revision,
      max_length: this.maxLength,
      min_tokens: sorted[0] as number,
      median_tokens: median,
      p95_tokens: sorted[Math.max(0, Math.ceil(0.95 * n) - 1)] as number,
      max_tokens: sorted[n - 1] as number,
      min_trainable_assistant_tokens: this.minTrainable,
    };
  }
}
