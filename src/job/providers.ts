// Hosted providers: where `-m PROVIDER/MODEL` is served when no --base-url says, and which of the
// user's variables holds its key. A provider's key goes only to that provider's route: its default
// URL, or an override the same run gives for it (--base-url, BENCHFLOW_PROVIDER_BASE_URL, or the
// provider's own base-URL variable); never to another provider's route or to a model you serve.
// The URLs and variable names are the providers' documented ones (and LiteLLM's, where they differ),
// so a user's shell already has them; docs/a-model-you-serve.md lists them.

import type { UpstreamWire } from "../gateway/types.js";

export interface HostedProvider {
  /** The prefix of `-m` (and its other spellings, as LiteLLM and upstream write them). */
  name: string;
  aliases: readonly string[];
  label: string;
  /** The API's base: the gateway appends /chat/completions, or /messages for Anthropic Messages. */
  baseUrl: string;
  /** The API the gateway calls it in (chat unless said). */
  wire?: UpstreamWire;
  /** Variables that override the base, first set wins; `suffix` is appended to their value. */
  baseUrlEnv: readonly string[];
  baseUrlEnvSuffix?: string;
  /** Variables holding the key, first set wins. */
  keyEnv: readonly string[];
  /** Where the base URL and key are documented. */
  docs: string;
}

export const HOSTED_PROVIDERS: readonly HostedProvider[] = [
  {
    name: "openai",
    aliases: [],
    label: "OpenAI",
    baseUrl: "https://api.openai.com/v1",
    baseUrlEnv: ["OPENAI_BASE_URL"],
    keyEnv: ["OPENAI_API_KEY"],
    docs: "https://platform.openai.com/docs/api-reference/chat",
  },
  {
    // Anthropic's own Messages API (Claude Code's calls pass through unconverted); ANTHROPIC_BASE_URL
    // is the API's root, as its SDKs read it.
    name: "anthropic",
    aliases: [],
    label: "Anthropic",
    baseUrl: "https://api.anthropic.com/v1",
    wire: "anthropic-messages",
    baseUrlEnv: ["ANTHROPIC_BASE_URL"],
    baseUrlEnvSuffix: "/v1",
    keyEnv: ["ANTHROPIC_API_KEY"],
    docs: "https://platform.claude.com/docs/en/api/messages",
  },
  {
    name: "deepseek",
    aliases: [],
    label: "DeepSeek",
    baseUrl: "https://api.deepseek.com/v1",
    baseUrlEnv: ["DEEPSEEK_BASE_URL"],
    keyEnv: ["DEEPSEEK_API_KEY"],
    docs: "https://api-docs.deepseek.com/",
  },
  {
    name: "openrouter",
    aliases: [],
    label: "OpenRouter",
    baseUrl: "https://openrouter.ai/api/v1",
    baseUrlEnv: ["OPENROUTER_BASE_URL", "OPENROUTER_API_BASE"],
    keyEnv: ["OPENROUTER_API_KEY"],
    docs: "https://openrouter.ai/docs/api-reference/overview",
  },
  {
    name: "together",
    aliases: ["together_ai", "togetherai"],
    label: "Together AI",
    baseUrl: "https://api.together.ai/v1",
    baseUrlEnv: ["TOGETHER_BASE_URL"],
    keyEnv: ["TOGETHER_API_KEY", "TOGETHERAI_API_KEY"],
    docs: "https://docs.together.ai/docs/inference/openai-compatibility",
  },
  {
    name: "fireworks",
    aliases: ["fireworks_ai"],
    label: "Fireworks AI",
    baseUrl: "https://api.fireworks.ai/inference/v1",
    baseUrlEnv: ["FIREWORKS_BASE_URL"],
    keyEnv: ["FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"],
    docs: "https://docs.fireworks.ai/tools-sdks/openai-compatibility",
  },
  {
    name: "groq",
    aliases: [],
    label: "Groq",
    baseUrl: "https://api.groq.com/openai/v1",
    baseUrlEnv: ["GROQ_BASE_URL"],
    keyEnv: ["GROQ_API_KEY"],
    docs: "https://console.groq.com/docs/openai",
  },
  {
    name: "mistral",
    aliases: [],
    label: "Mistral AI",
    baseUrl: "https://api.mistral.ai/v1",
    baseUrlEnv: ["MISTRAL_BASE_URL"],
    keyEnv: ["MISTRAL_API_KEY"],
    docs: "https://docs.mistral.ai/api/",
  },
  {
    name: "xai",
    aliases: [],
    label: "xAI",
    baseUrl: "https://api.x.ai/v1",
    baseUrlEnv: ["XAI_BASE_URL"],
    keyEnv: ["XAI_API_KEY"],
    docs: "https://docs.x.ai/docs/api-reference",
  },
  {
    // Gemini's OpenAI-compatible endpoint (the native generateContent API is another dialect).
    name: "gemini",
    aliases: ["google"],
    label: "Google Gemini",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai",
    baseUrlEnv: ["GEMINI_BASE_URL"],
    keyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    docs: "https://ai.google.dev/gemini-api/docs/openai",
  },
];

/** Prefixes of models a user serves (vLLM, SGLang, ...): they need --base-url, and get no provider key. */
export const SELF_SERVED = ["vllm", "sglang", "local", "hosted_vllm", "ollama", "lmstudio"] as const;

export function hostedProvider(prefix: string): HostedProvider | null {
  return HOSTED_PROVIDERS.find((p) => p.name === prefix || p.aliases.includes(prefix)) ?? null;
}

/** Every variable the provider table reads, for the environment's contract and for GATEWAY_ONLY. */
export const PROVIDER_ENV: readonly string[] = HOSTED_PROVIDERS.flatMap((p) => [
  ...p.keyEnv,
  ...p.baseUrlEnv,
]);

type Env = Record<string, string | undefined>;

function firstSet(env: Env, names: readonly string[]): { name: string; value: string } | null {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== "") return { name, value };
  }
  return null;
}

export interface ProviderRoute {
  baseUrl: string;
  /** Where the base URL came from: "--base-url", a variable's name, or "default". */
  baseUrlFrom: string;
  apiKey: string | null;
  /** Where the key came from: "--api-key", a variable's name, or null (none). */
  apiKeyFrom: string | null;
}

/**
 * The route of a hosted provider's model. Explicit settings (the flag, then upstream's
 * BENCHFLOW_PROVIDER_* variables) win over the provider's own variables; the provider's key is read
 * only for its own route, so a key set for one provider never reaches another.
 */
export function hostedRoute(
  p: HostedProvider,
  explicit: {
    baseUrl: { value: string; from: string } | null;
    apiKey: { value: string; from: string } | null;
  },
  env: Env,
): ProviderRoute {
  const own = firstSet(env, p.baseUrlEnv);
  const base =
    explicit.baseUrl ??
    (own ? { value: `${own.value.replace(/\/+$/, "")}${p.baseUrlEnvSuffix ?? ""}`, from: own.name } : null);
  const key =
    explicit.apiKey ??
    (() => {
      const k = firstSet(env, p.keyEnv);
      return k ? { value: k.value, from: k.name } : null;
    })();
  return {
    baseUrl: base?.value ?? p.baseUrl,
    baseUrlFrom: base?.from ?? "default",
    apiKey: key?.value ?? null,
    apiKeyFrom: key?.from ?? null,
  };
}

/** The providers as a refusal lists them. */
export function providerList(): string {
  return HOSTED_PROVIDERS.map((p) => p.name).join(", ");
}
