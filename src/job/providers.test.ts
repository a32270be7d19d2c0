// Where `-m provider/model` is called and with which key: each hosted provider's documented URL and
// key variable, overrides given for the run, and a key that never reaches another provider's route.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { resolvePolicy } from "./policy.js";
import { pricedModels, tablePrice } from "./prices.js";
import { HOSTED_PROVIDERS } from "./providers.js";

const route = (model: string, env: Record<string, string>, s = {}) => {
  const p = resolvePolicy(model, s, env);
  return {
    url: p.gateway.upstream.baseUrl,
    key: p.gateway.upstream.apiKey,
    from: [p.record.base_url_source, p.record.key_source],
  };
};

// Every provider's key set at once, as a user with several accounts has them.
const ALL_KEYS = Object.fromEntries(HOSTED_PROVIDERS.map((p) => [p.keyEnv[0] as string, `key-of-${p.name}`]));

describe("hosted providers", () => {
  it("each provider's model goes to its documented URL with its own key, whatever other keys are set", () => {
    for (const p of HOSTED_PROVIDERS) {
      const r = route(`${p.name}/some-model`, ALL_KEYS);
      assert.equal(r.url, p.baseUrl, p.name);
      assert.equal(r.key, `key-of-${p.name}`, `${p.name} gets its own key, never another's`);
      assert.deepEqual(r.from, ["default", p.keyEnv[0]]);
    }
    assert.equal(route("deepseek/deepseek-v4-flash", {}).url, "https://api.deepseek.com/v1");
    assert.equal(route("deepseek/deepseek-v4-flash", {}).key, null, "no key set: none sent");
  });

  it("LiteLLM's spellings of a provider and its key variable", () => {
    assert.equal(route("together_ai/m", { TOGETHERAI_API_KEY: "t" }).key, "t");
    assert.equal(route("fireworks_ai/m", { FIREWORKS_AI_API_KEY: "f" }).key, "f");
    assert.equal(route("gemini/m", { GOOGLE_API_KEY: "g" }).key, "g");
  });

  it("an override of a provider's URL keeps its key: the flag, upstream's variable, the provider's own", () => {
    const env = { ...ALL_KEYS, DEEPSEEK_BASE_URL: "http://127.0.0.1:9/v1" };
    assert.deepEqual(route("deepseek/x", env), {
      url: "http://127.0.0.1:9/v1",
      key: "key-of-deepseek",
      from: ["DEEPSEEK_BASE_URL", "DEEPSEEK_API_KEY"],
    });
    assert.equal(
      route("deepseek/x", env, { baseUrl: "http://10.0.0.2:8000/v1" }).url,
      "http://10.0.0.2:8000/v1",
    );
    // Anthropic's variable is the API's root, as its SDKs read it.
    assert.equal(
      route("anthropic/x", { ANTHROPIC_BASE_URL: "http://127.0.0.1:7/" }).url,
      "http://127.0.0.1:7/v1",
    );
    // --api-key and BENCHFLOW_PROVIDER_API_KEY win over the provider's variable.
    assert.equal(route("openai/x", { ...ALL_KEYS, BENCHFLOW_PROVIDER_API_KEY: "run" }).key, "run");
    assert.equal(route("openai/x", ALL_KEYS, { apiKey: "flag" }).key, "flag");
  });

  it("a model you serve gets no provider's key, and needs its URL", () => {
    const r = route("vllm/Qwen/Qwen3-8B", ALL_KEYS, { baseUrl: "http://gpu:8000/v1" });
    assert.equal(r.key, null, "OPENAI_API_KEY and the others stay home");
    assert.throws(
      () => route("vllm/Qwen/Qwen3-8B", ALL_KEYS),
      /where is vllm\/Qwen\/Qwen3-8B served\? pass policy\.baseUrl/,
    );
    assert.throws(
      () => route("mystery/m", {}),
      /"mystery" is not a hosted provider \(openai, anthropic, deepseek, openrouter, together, fireworks, groq, mistral, xai, gemini\)/,
    );
    assert.equal(route("mystery/m", ALL_KEYS, { baseUrl: "http://h:1/v1" }).key, null);
  });

  it("calls in flight: a hosted provider's API gets 64 at once (its rate limits), a model you serve 1024", () => {
    assert.equal(resolvePolicy("deepseek/x", {}, {}).record.endpoint.max_connections, 64);
    assert.equal(
      resolvePolicy("vllm/x", { baseUrl: "http://h:1/v1" }, {}).record.endpoint.max_connections,
      1024,
    );
    assert.equal(
      resolvePolicy("deepseek/x", { maxEndpointConnections: 8 }, {}).record.endpoint.max_connections,
      8,
    );
  });

  it("a bare model id is refused with the providers listed", () => {
    assert.throws(
      () => route("deepseek-v4-flash", {}),
      /must be provider\/model: a hosted provider \(openai, anthropic, deepseek/,
    );
  });
});

describe("the docs' table of providers", () => {
  it("lists each provider's prefix, URL, key variables and URL override as the code has them", () => {
    const page = readFileSync(
      path.join(path.dirname(fileURLToPath(import.meta.url)), "../../docs/a-model-you-serve.md"),
      "utf8",
    );
    for (const p of HOSTED_PROVIDERS) {
      const section = page.slice(page.indexOf("## Hosted models"));
      const row = section.split("\n").find((l) => l.startsWith(`| \`${p.name}/\``));
      assert.ok(row, `a row for ${p.name}`);
      for (const fact of [p.baseUrl, ...p.keyEnv, ...p.baseUrlEnv, ...p.aliases.map((a) => `${a}/`)])
        assert.ok(row.includes(`\`${fact}\``), `${p.name}'s row names ${fact}`);
    }
  });
});

describe("the price table", () => {
  it("prices the seed's model with its cache-hit rate, and --price overrides it", () => {
    const table = tablePrice("deepseek", "deepseek-v4-flash");
    assert.ok(table && table.cacheReadPerMTok !== null && (table.cacheReadPerMTok ?? 1) < table.inputPerMTok);
    assert.match(table.source ?? "", /^table: https:\/\/api-docs\.deepseek\.com\/.*, \d{4}-\d\d-\d\d$/);
    const p = resolvePolicy(
      "deepseek/deepseek-v4-flash",
      { price: { inputPerMTok: 1, outputPerMTok: 2 } },
      {},
    );
    assert.deepEqual(p.record.price_usd_per_mtok, {
      input: 1,
      output: 2,
      cache_read: null,
      cache_write: null,
      source: "--price",
    });
    assert.equal(resolvePolicy("vllm/m", { baseUrl: "http://h:1/v1" }, {}).record.price_usd_per_mtok, null);
  });

  it("every entry is one of our providers, with a source and sane rates", () => {
    const names = new Set(HOSTED_PROVIDERS.map((p) => p.name));
    for (const { model, entry } of pricedModels()) {
      assert.ok(names.has(model.split("/")[0] as string), model);
      assert.match(entry.source, /^https:\/\//, model);
      assert.ok(entry.input > 0 && entry.output >= entry.input * 0.5, model);
      if (entry.cacheRead !== null)
        assert.ok(entry.cacheRead < entry.input, `${model}: a cache hit costs less`);
    }
  });
});
