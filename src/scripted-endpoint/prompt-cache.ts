// A stand-in for a hosted provider's prompt cache, as DeepSeek documents its own: a request's prefix
// shared with an earlier request is a cache hit, counted in whole 64-token units; the answer's usage
// says `prompt_cache_hit_tokens` and `prompt_cache_miss_tokens` (prompt_tokens is their sum). An agent
// re-sends its growing conversation on every turn, so most of a rollout's input is hits: what makes
// the seed's "$0.01 for 190,000 to 270,000 tokens" add up.

const UNIT = 64;
/** Prompts kept to match against: a rollout's recent turns are what its next turn shares. */
const KEPT = 256;

export class PromptCache {
  private readonly seen: number[][] = [];

  /** The cache hit of `prompt` (tokens of it an earlier prompt began with), then remembers it. */
  hit(prompt: readonly number[]): number {
    let best = 0;
    for (const earlier of this.seen) {
      const n = Math.min(earlier.length, prompt.length);
      let i = 0;
      while (i < n && earlier[i] === prompt[i]) i++;
      if (i > best) best = i;
    }
    this.seen.push([...prompt]);
    if (this.seen.length > KEPT) this.seen.shift();
    return Math.floor(best / UNIT) * UNIT;
  }
}

/** DeepSeek's usage fields for a prompt of `prompt` tokens of which `hit` were cached. */
export function deepseekCacheFields(prompt: number, hit: number): Record<string, unknown> {
  // As the recording of api.deepseek.com shows them (test/fixtures/wire/usage/deepseek.real.json).
  return {
    prompt_tokens_details: { cached_tokens: hit },
    prompt_cache_hit_tokens: hit,
    prompt_cache_miss_tokens: prompt - hit,
  };
}
