// A call's token counts as the provider's answer reports them. Every provider says prompt and
// completion tokens in Chat Completions' fields; each reports its prompt cache in its own: OpenAI
// (and the servers that copy it: OpenRouter, xAI, Groq, Gemini's compatible endpoint, vLLM)
// `prompt_tokens_details.cached_tokens`, DeepSeek `prompt_cache_hit_tokens`, Anthropic
// `cache_read_input_tokens` and `cache_creation_input_tokens`, OpenRouter's writes
// `prompt_tokens_details.cache_write_tokens`. Cost needs them apart: a cache hit costs a fraction of
// an input token (the seed's "$0.01 for 190,000 to 270,000 tokens" adds up only at cache-hit prices).
import { isObject, type JsonObject, type Price } from "./types.js";

export type { Price };

export interface CallTokens {
  /** The prompt as the answer counts it, cached tokens included (Chat Completions' prompt_tokens). */
  input: number;
  output: number;
  /** Of `input`, tokens read from the provider's prompt cache. */
  cacheRead: number;
  /** Of `input`, tokens written to the provider's prompt cache (priced apart by Anthropic and OpenRouter). */
  cacheWrite: number;
}

export const NO_TOKENS: CallTokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** The counts of a Chat Completions `usage` object, whichever provider's cache fields it carries. */
export function tokensOfUsage(usage: JsonObject): CallTokens {
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const anthropicRead = count(usage.cache_read_input_tokens);
  const anthropicWrite = count(usage.cache_creation_input_tokens);
  const cacheRead = count(details.cached_tokens) || count(usage.prompt_cache_hit_tokens) || anthropicRead;
  const cacheWrite = count(details.cache_write_tokens) || anthropicWrite;
  let input = count(usage.prompt_tokens);
  // Anthropic's own counts leave cache reads and writes out of input_tokens; as prompt_tokens they are in.
  if (input === 0 && (anthropicRead > 0 || anthropicWrite > 0 || count(usage.input_tokens) > 0))
    input = count(usage.input_tokens) + anthropicRead + anthropicWrite;
  const output = count(usage.completion_tokens) || count(usage.output_tokens);
  return { input, output, cacheRead: Math.min(cacheRead, input), cacheWrite: Math.min(cacheWrite, input) };
}

/** One call's cost at `price`: uncached input, cache reads and writes, and output, each at its rate. */
export function costOf(t: CallTokens, price: Price): number {
  const read = price.cacheReadPerMTok ?? price.inputPerMTok;
  const write = price.cacheWritePerMTok ?? price.inputPerMTok;
  const plain = Math.max(0, t.input - t.cacheRead - t.cacheWrite);
  return (
    (plain * price.inputPerMTok +
      t.cacheRead * read +
      t.cacheWrite * write +
      t.output * price.outputPerMTok) /
    1e6
  );
}
