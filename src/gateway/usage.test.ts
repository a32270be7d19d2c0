// Token counts and cost from the usage objects providers document (test/fixtures/wire/usage): each
// provider's prompt-cache field is read, and cost prices cache hits apart from plain input.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { WIRE_DIR } from "./testing/wire.js";
import { costOf, tokensOfUsage } from "./usage.js";

const usage = (file: string) => JSON.parse(readFileSync(path.join(WIRE_DIR, "usage", file), "utf8"));

describe("a provider's usage, read as it reports it", () => {
  it("OpenAI's cached_tokens, xAI's and OpenRouter's (with its cache writes) are parts of prompt_tokens", () => {
    assert.deepEqual(tokensOfUsage(usage("openai.cached.json")), {
      input: 2006,
      output: 300,
      cacheRead: 1920,
      cacheWrite: 0,
    });
    assert.deepEqual(tokensOfUsage(usage("xai.cached.json")), {
      input: 125,
      output: 48,
      cacheRead: 98,
      cacheWrite: 0,
    });
    assert.deepEqual(tokensOfUsage(usage("openrouter.cache-write.json")), {
      input: 194,
      output: 2,
      cacheRead: 0,
      cacheWrite: 100,
    });
  });

  it("DeepSeek's prompt_cache_hit_tokens, when its cached_tokens says 0 and when the hit is real", () => {
    assert.deepEqual(tokensOfUsage(usage("deepseek.real.json")), {
      input: 14,
      output: 9,
      cacheRead: 0,
      cacheWrite: 0,
    });
    // The documented fields with a hit (prompt_tokens = hit + miss), as DeepSeek's stand-in answers.
    const hit = {
      ...usage("deepseek.real.json"),
      prompt_tokens: 5000,
      prompt_cache_hit_tokens: 4864,
      prompt_cache_miss_tokens: 136,
    };
    assert.equal(tokensOfUsage(hit).cacheRead, 4864);
  });

  it("Anthropic's own counts: cache reads and writes are outside input_tokens, so input adds them", () => {
    const native = JSON.parse(
      readFileSync(path.join(WIRE_DIR, "anthropic", "response.text.json"), "utf8"),
    ).usage;
    assert.deepEqual(tokensOfUsage(native), { input: 2095, output: 503, cacheRead: 0, cacheWrite: 0 });
    assert.deepEqual(
      tokensOfUsage({ ...native, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 }),
      { input: 3295, output: 503, cacheRead: 1000, cacheWrite: 200 },
    );
  });

  it("a server without a cache (Gemini's first call, vLLM) reads as plain input", () => {
    assert.deepEqual(tokensOfUsage(usage("gemini.real.json")), {
      input: 1469,
      output: 744,
      cacheRead: 0,
      cacheWrite: 0,
    });
  });
});

describe("a call's cost", () => {
  const flash = { inputPerMTok: 0.3, outputPerMTok: 1.2, cacheReadPerMTok: 0.006 };

  it("prices cache hits at their rate: the seed's $0.01 for ~250,000 tokens adds up only so", () => {
    // A 25-call rollout re-sending a growing prompt: ~96% of its input is cache hits.
    const t = { input: 240_000, output: 6_000, cacheRead: 230_000, cacheWrite: 0 };
    const cost = costOf(t, flash);
    assert.ok(Math.abs(cost - (10_000 * 0.3 + 230_000 * 0.006 + 6_000 * 1.2) / 1e6) < 1e-12);
    assert.ok(cost > 0.005 && cost < 0.02, `about a cent: ${cost}`);
    // Priced as plain input it would be 8x that.
    assert.ok(costOf(t, { inputPerMTok: 0.3, outputPerMTok: 1.2 }) > 6 * cost);
  });

  it("a cache price left out costs as input; cache writes at their own rate", () => {
    const t = { input: 1000, output: 0, cacheRead: 400, cacheWrite: 100 };
    assert.equal(costOf(t, { inputPerMTok: 1, outputPerMTok: 0 }), 1000 / 1e6);
    assert.equal(
      costOf(t, { inputPerMTok: 1, outputPerMTok: 0, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25 }),
      (500 + 400 * 0.1 + 100 * 1.25) / 1e6,
    );
  });
});
