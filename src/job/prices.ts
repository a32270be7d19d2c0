// The price table: USD per million tokens of the hosted models users start with, each with the page
// it was read from and when, so `cost_usd` is known without --price (which overrides it). Prices
// change: a run records which prices it used (config.json policy.price_usd_per_mtok.source, and
// result.json agent_result.price_source), so an old run's cost can be read for what it was.
import type { Price } from "../gateway/usage.js";
import { hostedProvider } from "./providers.js";

interface TableEntry {
  /** Model ids as the provider's API takes them (after the `provider/` prefix). */
  models: readonly string[];
  input: number;
  output: number;
  cacheRead: number | null;
  cacheWrite: number | null;
  source: string;
  /** The day the page was read (or the date it states). */
  checked: string;
  note?: string;
}

const CHECKED = "2026-12-07";
const ANTHROPIC = "https://platform.claude.com/docs/en/about-claude/pricing";
const DEEPSEEK = "https://api-docs.deepseek.com/quick_start/pricing";
const GEMINI = "https://ai.google.dev/gemini-api/docs/pricing";
const DEEPSEEK_NOTE = "peak rates; DeepSeek bills off-peak hours at half (its page gives the hours)";

function entry(
  models: string[],
  input: number,
  output: number,
  cacheRead: number | null,
  cacheWrite: number | null,
  source: string,
  note?: string,
): TableEntry {
  return {
    models,
    input,
    output,
    cacheRead,
    cacheWrite,
    source,
    checked: CHECKED,
    ...(note ? { note } : {}),
  };
}

// Keyed by the provider's name in providers.ts. A budget (max cost) errs high: where a provider
// has two rates by the hour, the table holds the higher.
const TABLE: Record<string, readonly TableEntry[]> = {
  openai: [
    entry(["gpt-6.2-sol"], 2.0, 10.0, 0.1, 2.5, "https://developers.openai.com/api/docs/models/gpt-6.2-sol"),
    entry(["gpt-6-luna"], 0.1, 0.5, 0.01, 0.125, "https://developers.openai.com/api/docs/models/gpt-6-luna"),
    entry(
      ["gpt-5.6-luna"],
      0.2,
      1.2,
      0.02,
      0.25,
      "https://developers.openai.com/api/docs/models/gpt-5.6-luna",
    ),
  ],
  anthropic: [
    // Cache writes at the 5-minute rate (what Claude Code asks for by default).
    entry(["claude-opus-5-5"], 4.0, 20.0, 0.2, 5.0, ANTHROPIC),
    entry(["claude-sonnet-5-5"], 2.0, 10.0, 0.1, 2.5, ANTHROPIC),
    entry(["claude-haiku-5-5"], 0.1, 0.5, 0.01, 0.125, ANTHROPIC),
  ],
  deepseek: [
    // The page: deepseek-v4-flash is a legacy name, served by V4.1 Flash and billed at Flash prices.
    entry(["deepseek-flash", "deepseek-v4-flash"], 0.3, 1.2, 0.006, null, DEEPSEEK, DEEPSEEK_NOTE),
    entry(["deepseek-v4-pro"], 1.32, 3.96, 0.044, null, DEEPSEEK, DEEPSEEK_NOTE),
  ],
  together: [
    entry(["openai/gpt-oss-120b"], 0.15, 0.6, null, null, "https://docs.together.ai/docs/serverless-models"),
  ],
  fireworks: [
    entry(
      ["accounts/fireworks/models/gpt-oss-120b"],
      0.15,
      0.6,
      0.015,
      null,
      "https://docs.fireworks.ai/serverless/pricing",
    ),
  ],
  groq: [entry(["openai/gpt-oss-120b"], 0.15, 0.6, 0.075, null, "https://console.groq.com/docs/models")],
  mistral: [entry(["mistral-medium-3.5"], 1.5, 7.5, 0.15, null, "https://docs.mistral.ai/")],
  xai: [entry(["grok-4.7", "grok-4.6"], 2.0, 6.0, 0.5, null, "https://docs.x.ai/developers/models")],
  gemini: [
    // Gemini 3.8 Flash's launch price holds through 2026-12-31 (the page: $1.50 / $7.50 from 2027-01-01).
    entry(["gemini-3.8-flash"], 0.75, 3.75, 0.075, null, GEMINI, "launch price, through 2026-12-31"),
    entry(["gemini-3.1-pro-preview"], 2.0, 12.0, 0.2, null, GEMINI),
  ],
};

/** The table's price of `provider/model`, or null where it has none (a model you serve, an unlisted one). */
export function tablePrice(provider: string, model: string): Price | null {
  const hosted = hostedProvider(provider);
  if (!hosted) return null;
  const entry = (TABLE[hosted.name] ?? []).find((e) => e.models.includes(model));
  if (!entry) return null;
  return {
    inputPerMTok: entry.input,
    outputPerMTok: entry.output,
    cacheReadPerMTok: entry.cacheRead,
    cacheWritePerMTok: entry.cacheWrite,
    source: `table: ${entry.source}, ${entry.checked}`,
  };
}

/** Every priced model as `provider/model`, for the docs' table and for tests. */
export function pricedModels(): { model: string; entry: TableEntry }[] {
  return Object.entries(TABLE).flatMap(([provider, entries]) =>
    entries.flatMap((entry) => entry.models.map((m) => ({ model: `${provider}/${m}`, entry }))),
  );
}
