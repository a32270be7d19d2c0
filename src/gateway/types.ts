// The gateway's public contract (what a rollout's run and the CLI call) and the JSON shapes it passes around.

/** USD per million tokens; a cache price left out costs as a plain input token. */
export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number | null;
  cacheWritePerMTok?: number | null;
  /** Where the prices are from: "--price", or the table's source and date (job/prices.ts). */
  source?: string;
}

export interface GatewayOptions {
  upstream: {
    /** The policy's OpenAI-compatible base URL, e.g. http://gpu-host:8000/v1. */
    baseUrl: string;
    apiKey: string | null;
    /** Bare model name, e.g. "Qwen/Qwen3-8B": what goes upstream whatever the agent asked for. */
    model: string;
    /**
     * The provider of the model option `provider/model`: "vllm" | "sglang" | "openai" | ... (decides
     * how token ids are asked for).
     */
    provider: string;
    /**
     * The API the endpoint speaks (default "openai-chat"): "anthropic-messages" for Anthropic's own
     * (its provider's default), where Anthropic agents' calls pass through unconverted.
     */
    wire?: UpstreamWire;
  };
  /** Enforced on every upstream call, over whatever the agent sent. */
  sampling: {
    temperature?: number;
    topP?: number;
    maxTokens?: number;
    /** The run's base seed: a rollout of repeat k sends `seed: seed + k - 1` on every call. */
    seed?: number;
    /** The run's reasoning effort (chat's reasoning_effort), over whatever the agent asked. */
    reasoningEffort?: string;
  };
  capture: { enabled: boolean; tokenIds?: "auto" | "on" | "off"; topLogprobs?: number | null };
  /** The policy option policyVersion; else what the server reports. */
  policyVersion?: string | null;
  /** USD per million tokens. */
  /** USD per million tokens (usage.ts): the run's --price, else the price table's (job/prices.ts). */
  price?: Price | null;
  host?: string;
  port?: number;
  /** Both endpoint limits at once (older name); `endpoint` wins where it sets one. */
  upstreamTimeoutSec?: number;
  /** How the gateway judges the endpoint (defaults in ENDPOINT_DEFAULTS). */
  endpoint?: Partial<EndpointPolicy>;
  /** What one rollout may make the gateway hold and write (defaults in BOUNDS_DEFAULTS). */
  bounds?: Partial<GatewayBounds>;
}

/**
 * A rollout's share of the gateway: a policy can drive its agent to send anything, so what one call
 * and one rollout may cost the host is bounded, and what goes over is refused and counted.
 */
export interface GatewayBounds {
  /** Bytes of one request body, and of one answer from the policy server. */
  callBytes: number;
  /** Bytes of the rollout's trajectory file: a call that would go over is refused unsent. */
  recordedBytes: number;
}

const MIB = 1024 * 1024;
export const BOUNDS_DEFAULTS: GatewayBounds = { callBytes: 64 * MIB, recordedBytes: 1024 * MIB };

export interface EndpointPolicy {
  /** Seconds from the request to the endpoint's first byte before the call fails (504). */
  firstByteTimeoutSec: number;
  /** Seconds without a byte, once the answer started, before the call fails (504). */
  idleTimeoutSec: number;
  /** The gateway's own retries of a 429 or 503 (with backoff, honouring Retry-After) before the agent sees it. */
  retries: number;
  /** Consecutive endpoint failures in one rollout that end it as provider_error at once. */
  failFastCalls: number;
  /**
   * Calls in flight to the endpoint at once, for the whole run (a job's gateway gets its share when
   * repeat jobs run at once); more wait their turn. Parallel groups against a hosted API must not set
   * off a storm of 429s.
   */
  maxConnections: number;
}

export const ENDPOINT_DEFAULTS: EndpointPolicy = {
  firstByteTimeoutSec: 600,
  idleTimeoutSec: 300,
  retries: 2,
  failFastCalls: 3,
  // A model you serve (vLLM batches hundreds of sequences): the bound only guards the host. A hosted
  // provider's runs get HOSTED_MAX_CONNECTIONS instead (job/policy.ts), below its rate limits.
  maxConnections: 1024,
};

/** Calls in flight at once to a hosted provider's API by default: parallel groups stay under its rate limits. */
export const HOSTED_MAX_CONNECTIONS = 64;

/**
 * Whose fault a failed call is, which decides the rollout's outcome (see rollout/outcome.ts):
 * - endpoint: the policy server failed (refused, reset, silent, 5xx, 429/503 after retries,
 *   a body that does not parse, a stream cut short): infrastructure, never the policy's reward.
 * - config: the endpoint refuses the user's key or does not know the route or model (401/403/404).
 * - policy: the request the policy produced was refused (400, 413, 422: e.g. context too long).
 * - agent: the agent hung up before the answer was complete (its own limit, or it was stopped).
 * - gateway: our own bug.
 */
export type CallFault = "endpoint" | "config" | "policy" | "agent" | "gateway";

/** How one call ended, as far as the rollout's outcome is concerned. */
export interface CallVerdict {
  /** null: the call succeeded. */
  fault: CallFault | null;
  status: number;
  message: string | null;
}

/**
 * The gateway's testimony about one rollout: every call and how the endpoint answered. The rollout
 * decides its outcome from it and the agent's exit (rollout/outcome.ts).
 */
export interface ModelWitness {
  calls: number;
  failedCalls: number;
  /** The last call that reached a verdict; calls the agent itself hung up on are not verdicts. */
  last: CallVerdict | null;
  /** Endpoint failures since the last call that did not fail at the endpoint. */
  consecutiveEndpointFailures: number;
  /** Set when the gateway ended the rollout (fail-fast, or the endpoint refused the configuration). */
  endedBy: { category: "provider_error" | "config_error"; message: string } | null;
}

export interface RolloutUsage {
  calls: number;
  failedCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, read from and written to the provider's prompt cache (usage.ts). */
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
  /** Where the prices of costUsd are from (Price.source), null without prices. */
  priceSource: string | null;
  policyVersions: string[];
  lastError: string | null;
  /** The agent's request fields the gateway did not forward (forwarded.ts), with how many calls sent each. */
  droppedFields: Record<string, number>;
  /** Calls refused for going over a bound (GatewayBounds), by which: request, answer, recorded. */
  refusedCalls: Partial<Record<"request" | "answer" | "recorded", number>>;
  /** Bytes written to the rollout's trajectory file. */
  recordedBytes: number;
  /** Calls by who made them (origin.ts): agent, other (a command its tools ran), unattributed. */
  callsByOrigin: Partial<Record<"agent" | "other" | "unattributed", number>>;
  /** Calls the server said another policy version served than the run stamped. */
  policyVersionMismatches: number;
}

export interface Gateway {
  /** http://host:port (agents add /v1 etc.). */
  readonly url: string;
  /** Signs a trusted relay's origin lines (origin.ts): given to relays that attribute, never to a sandbox. */
  readonly originKey: string;
  /**
   * Registers a rollout and returns a fresh random credential for it, and a signal the gateway aborts
   * when it ends the rollout (the endpoint failed K times in a row, or refused the configuration).
   * `repeat` (the 1-based index of the repeat job, default 1) is forwarded upstream with the rollout's
   * name on every call (ROLLOUT_HEADERS), so the scripted endpoint can vary its replies per rollout.
   */
  addRollout(
    rolloutName: string,
    opts: { trajectoryFile: string; repeat?: number },
  ): { apiKey: string; ended: AbortSignal };
  /** What the gateway saw of the rollout's calls. */
  witness(rolloutName: string): ModelWitness;
  /** A multi-step rollout's step began: the lines of calls made from now on carry `metadata.step`. */
  setStep(rolloutName: string, step: string): void;
  /** Revokes the credential at once; resolves when the rollout's in-flight calls are recorded and its file is closed. */
  removeRollout(rolloutName: string): Promise<void>;
  usage(rolloutName: string): RolloutUsage;
  close(): Promise<void>;
}

/** The APIs an endpoint may speak: chat for every OpenAI-compatible server, Messages for Anthropic's. */
export type UpstreamWire = "openai-chat" | "anthropic-messages";

/** The inbound dialects (upstream's `wire` names, and Gemini's generateContent). */
export type Wire = "openai-chat" | "openai-responses" | "anthropic-messages" | "gemini-generate-content";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: string;
  content?: string | JsonObject[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  name?: string;
}

/** One choice of a chat completion, as assembled (streamed or not). */
export interface ChatChoice {
  index: number;
  message: {
    role: "assistant";
    content: string | null;
    reasoning_content?: string | null;
    tool_calls?: ChatToolCall[];
  };
  finish_reason: string | null;
  /** vLLM: the stop string or token that ended the choice. */
  stop_reason?: Json;
  logprobs?: Json;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: ChatChoice[];
  /** Chat's three counts, and the provider's prompt-cache fields where it sent them (usage.ts). */
  usage:
    | ({ prompt_tokens: number; completion_tokens: number; total_tokens: number } & { [k: string]: Json })
    | null;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
