// The policy a model-using agent calls: `-m provider/model` plus where it is served. Flags win
// over upstream's BENCHFLOW_* variables (from --agent-env, then the environment). The real key
// goes only to the gateway: never into a sandbox, config.json or any file under the jobs dir.
import { UserInputError } from "../errors.js";
import {
  boundsOf,
  checkBounds,
  checkEndpointPolicy,
  endpointPolicyOf,
  type GatewayOptions,
} from "../gateway/index.js";
import { HOSTED_MAX_CONNECTIONS } from "../gateway/types.js";
import type { Price } from "../gateway/usage.js";
import { opt } from "../options.js";
import type { PolicyRecord } from "../schemas/rollout-config.js";
import { tablePrice } from "./prices.js";
import { hostedProvider, hostedRoute, type ProviderRoute, providerList, SELF_SERVED } from "./providers.js";

export interface PolicySettings {
  baseUrl?: string | null;
  apiKey?: string | null;
  temperature?: number | null;
  topP?: number | null;
  maxTokens?: number | null;
  /** Reasoning effort (chat's reasoning_effort: none, minimal, low, medium, high, xhigh), over the agent's. */
  reasoningEffort?: string | null;
  /** A base seed: repeat k of a group sends seed + k - 1 on every call (reproducible sampling on vLLM). */
  seed?: number | null;
  policyVersion?: string | null;
  captureTokens?: boolean;
  /** USD per million tokens, for cost, over the price table's (prices.ts). */
  price?: Price | null;
  /** Both endpoint limits at once (older name). */
  upstreamTimeoutSec?: number;
  /** Seconds to the endpoint's first byte before a call fails (default 600). */
  firstByteTimeoutSec?: number | null;
  /** Seconds without a byte once an answer started before a call fails (default 300). */
  idleTimeoutSec?: number | null;
  /** The gateway's own retries of a 429 or 503 (default 2). */
  endpointRetries?: number | null;
  /** Consecutive endpoint failures that end a rollout as provider_error at once (default 3). */
  failFastCalls?: number | null;
  /** Calls to the endpoint in flight at once over the whole run (default 64); more wait their turn. */
  maxEndpointConnections?: number | null;
  /** MiB of one request body and of one answer; more is refused (default 64). */
  maxCallMib?: number | null;
  /** MiB of one rollout's recorded calls (its llm_trajectory.jsonl); a call that would go over is refused (default 1024). */
  maxRecordedMib?: number | null;
}

/** Every option of `policy`: one not listed here is refused with the nearest name. */
export const POLICY_SETTINGS: Record<keyof PolicySettings, true> = {
  baseUrl: true,
  apiKey: true,
  temperature: true,
  topP: true,
  maxTokens: true,
  reasoningEffort: true,
  seed: true,
  policyVersion: true,
  captureTokens: true,
  price: true,
  upstreamTimeoutSec: true,
  firstByteTimeoutSec: true,
  idleTimeoutSec: true,
  endpointRetries: true,
  failFastCalls: true,
  maxEndpointConnections: true,
  maxCallMib: true,
  maxRecordedMib: true,
};

export interface ResolvedPolicy {
  gateway: GatewayOptions;
  /** What config.json records: everything but the key. */
  record: PolicyRecord;
}

function numberFrom(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new UserInputError(`${name}=${JSON.stringify(raw)} must be a number`);
  return n;
}

/** The levels OpenAI-compatible servers take for reasoning_effort. */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;

function reasoningEffortOf(raw: string | null | undefined): string | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (!(REASONING_EFFORTS as readonly string[]).includes(raw))
    throw new UserInputError(
      `${opt("policy.reasoningEffort")} ${JSON.stringify(raw)} is not a reasoning effort: use one of ${REASONING_EFFORTS.join(", ")}`,
    );
  return raw;
}

const MIB = 1024 * 1024;

function mibToBytes(mib: number | undefined): number | undefined {
  return mib === undefined ? undefined : Math.round(mib * MIB);
}

function truthy(raw: string | undefined): boolean {
  return raw !== undefined && ["1", "true", "yes", "on"].includes(raw.toLowerCase());
}

export function resolvePolicy(
  model: string,
  s: PolicySettings,
  env: Record<string, string | undefined>,
): ResolvedPolicy {
  const slash = model.indexOf("/");
  if (slash <= 0 || slash === model.length - 1) {
    throw new UserInputError(
      `${opt("model")} ${JSON.stringify(model)} must be provider/model: a hosted provider (${providerList()}) or a model you serve (vllm/..., sglang/... with ${opt("policy.baseUrl")}), e.g. deepseek/deepseek-v4-flash or vllm/Qwen/Qwen3-8B`,
    );
  }
  const provider = model.slice(0, slash);
  const bare = model.slice(slash + 1);
  const route = routeOf(model, provider, s, env);
  const baseUrl = route.baseUrl;
  try {
    new URL(baseUrl);
  } catch {
    throw new UserInputError(
      `${opt("policy.baseUrl")} ${JSON.stringify(baseUrl)} is not a URL: use http://HOST:PORT/v1`,
    );
  }
  const wire = hostedProvider(provider)?.wire ?? "openai-chat";
  const sampling = {
    temperature: s.temperature ?? numberFrom("BENCHFLOW_TEMPERATURE", env.BENCHFLOW_TEMPERATURE),
    topP: s.topP ?? numberFrom("BENCHFLOW_TOP_P", env.BENCHFLOW_TOP_P),
    maxTokens: s.maxTokens ?? numberFrom("BENCHFLOW_MAX_TOKENS", env.BENCHFLOW_MAX_TOKENS),
    seed: s.seed ?? numberFrom("BENCHFLOW_SEED", env.BENCHFLOW_SEED),
    reasoningEffort: reasoningEffortOf(s.reasoningEffort ?? env.BENCHFLOW_REASONING_EFFORT),
  };
  if (sampling.seed !== undefined && !(Number.isSafeInteger(sampling.seed) && sampling.seed >= 0))
    throw new UserInputError(`${opt("policy.seed")} must be a whole number >= 0; got ${sampling.seed}`);
  const tokenIdsEnv = env.BENCHFLOW_CAPTURE_TOKEN_IDS;
  const capture = {
    enabled: s.captureTokens === true || truthy(env.BENCHFLOW_CAPTURE_TOKEN_LOGPROBS),
    tokenIds:
      tokenIdsEnv === "1" ? ("on" as const) : tokenIdsEnv === "0" ? ("off" as const) : ("auto" as const),
    topLogprobs: numberFrom("BENCHFLOW_CAPTURE_TOP_LOGPROBS", env.BENCHFLOW_CAPTURE_TOP_LOGPROBS) ?? null,
  };
  // --price over the table's: a model the table does not price (or one you serve) has no cost.
  const price: Price | null = s.price ? { ...s.price, source: "--price" } : tablePrice(provider, bare);
  const gateway: GatewayOptions = {
    upstream: { baseUrl, apiKey: route.apiKey, model: bare, provider, wire },
    sampling,
    capture,
    policyVersion: s.policyVersion ?? null,
    price,
    upstreamTimeoutSec: s.upstreamTimeoutSec,
    ...limitsOf(s, env, hostedProvider(provider) !== null),
  };
  const endpoint = endpointPolicyOf(gateway);
  checkEndpointPolicy(endpoint);
  const bounds = boundsOf(gateway);
  checkBounds(bounds);
  const record = {
    provider,
    provider_model: bare,
    base_url: baseUrl,
    // Where the URL and the key came from (a flag, a variable's name, the provider's default): never the key.
    base_url_source: route.baseUrlFrom,
    api: wire,
    key_source: route.apiKeyFrom,
    sampling: {
      temperature: sampling.temperature ?? null,
      top_p: sampling.topP ?? null,
      max_tokens: sampling.maxTokens ?? null,
      seed: sampling.seed ?? null,
      // Only when set: config.json's sampling keeps its shape for runs that never set one.
      ...(sampling.reasoningEffort !== undefined ? { reasoning_effort: sampling.reasoningEffort } : {}),
    },
    capture_tokens: {
      enabled: capture.enabled,
      token_ids: capture.tokenIds,
      top_logprobs: capture.topLogprobs,
    },
    policy_version: s.policyVersion ?? null,
    price_usd_per_mtok: price
      ? {
          input: price.inputPerMTok,
          output: price.outputPerMTok,
          cache_read: price.cacheReadPerMTok ?? null,
          cache_write: price.cacheWritePerMTok ?? null,
          source: price.source ?? null,
        }
      : null,
    endpoint: {
      first_byte_timeout_sec: endpoint.firstByteTimeoutSec,
      idle_timeout_sec: endpoint.idleTimeoutSec,
      retries_429_503: endpoint.retries,
      fail_fast_calls: endpoint.failFastCalls,
      max_connections: endpoint.maxConnections,
    },
    bounds: {
      max_call_mib: bounds.callBytes / MIB,
      max_recorded_mib: bounds.recordedBytes / MIB,
    },
  };
  return { gateway, record };
}

const given = (value: string | null | undefined, from: string) =>
  value === undefined || value === null || value === "" ? null : { value, from };

/**
 * Where the model is called and with which key. A model you serve (vllm/, sglang/, any prefix that is
 * not a hosted provider) needs a base URL and gets only a key given for the run; a hosted provider's
 * model has its documented URL and reads its own key variable (providers.ts).
 */
function routeOf(
  model: string,
  provider: string,
  s: PolicySettings,
  env: Record<string, string | undefined>,
): ProviderRoute {
  const explicit = {
    baseUrl:
      given(s.baseUrl, opt("policy.baseUrl")) ??
      given(env.BENCHFLOW_PROVIDER_BASE_URL, "BENCHFLOW_PROVIDER_BASE_URL"),
    apiKey:
      given(s.apiKey, opt("policy.apiKey")) ??
      given(env.BENCHFLOW_PROVIDER_API_KEY, "BENCHFLOW_PROVIDER_API_KEY"),
  };
  const hosted = hostedProvider(provider);
  if (hosted) return hostedRoute(hosted, explicit, env);
  if (!explicit.baseUrl) {
    const served = (SELF_SERVED as readonly string[]).includes(provider);
    throw new UserInputError(
      served
        ? `where is ${model} served? pass ${opt("policy.baseUrl", "http://HOST:PORT/v1")} (or BENCHFLOW_PROVIDER_BASE_URL=... through ${opt("agentEnv")})`
        : `${opt("model")} ${model}: ${JSON.stringify(provider)} is not a hosted provider (${providerList()}); for a model you serve, pass ${opt("policy.baseUrl", "http://HOST:PORT/v1")}`,
    );
  }
  return {
    baseUrl: explicit.baseUrl.value,
    baseUrlFrom: explicit.baseUrl.from,
    apiKey: explicit.apiKey?.value ?? null,
    apiKeyFrom: explicit.apiKey?.from ?? null,
  };
}

/** The endpoint limits and the bounds of a rollout's calls: flags over upstream's variables. */
function limitsOf(
  s: PolicySettings,
  env: Record<string, string | undefined>,
  hosted: boolean,
): Pick<GatewayOptions, "endpoint" | "bounds"> {
  return {
    endpoint: {
      firstByteTimeoutSec:
        s.firstByteTimeoutSec ??
        numberFrom("BENCHFLOW_ENDPOINT_FIRST_BYTE_TIMEOUT", env.BENCHFLOW_ENDPOINT_FIRST_BYTE_TIMEOUT),
      idleTimeoutSec:
        s.idleTimeoutSec ??
        numberFrom("BENCHFLOW_ENDPOINT_IDLE_TIMEOUT", env.BENCHFLOW_ENDPOINT_IDLE_TIMEOUT),
      retries: s.endpointRetries ?? numberFrom("BENCHFLOW_ENDPOINT_RETRIES", env.BENCHFLOW_ENDPOINT_RETRIES),
      failFastCalls:
        s.failFastCalls ?? numberFrom("BENCHFLOW_FAIL_FAST_CALLS", env.BENCHFLOW_FAIL_FAST_CALLS),
      maxConnections:
        s.maxEndpointConnections ??
        numberFrom("BENCHFLOW_MAX_ENDPOINT_CONNECTIONS", env.BENCHFLOW_MAX_ENDPOINT_CONNECTIONS) ??
        (hosted ? HOSTED_MAX_CONNECTIONS : undefined),
    },
    bounds: {
      callBytes: mibToBytes(s.maxCallMib ?? numberFrom("BENCHFLOW_MAX_CALL_MIB", env.BENCHFLOW_MAX_CALL_MIB)),
      recordedBytes: mibToBytes(
        s.maxRecordedMib ?? numberFrom("BENCHFLOW_MAX_RECORDED_MIB", env.BENCHFLOW_MAX_RECORDED_MIB),
      ),
    },
  };
}
