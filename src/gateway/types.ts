// The gateway's public contract (what trials and the CLI call) and the JSON shapes it passes around.

export interface GatewayOptions {
  upstream: {
    /** The policy's OpenAI-compatible base URL, e.g. http://gpu-host:8000/v1. */
    baseUrl: string;
    apiKey: string | null;
    /** Bare model name, e.g. "Qwen/Qwen3-8B": what goes upstream whatever the agent asked for. */
    model: string;
    /** From `-m provider/model`: "vllm" | "sglang" | "openai" | ... (decides how token ids are asked for). */
    provider: string;
  };
  /** Enforced on every upstream call, over whatever the agent sent. */
  sampling: { temperature?: number; topP?: number; maxTokens?: number };
  capture: { enabled: boolean; tokenIds?: "auto" | "on" | "off"; topLogprobs?: number | null };
  /** --policy-version; else what the server reports. */
  policyVersion?: string | null;
  /** USD per million tokens. */
  price?: { inputPerMTok: number; outputPerMTok: number } | null;
  host?: string;
  port?: number;
  /** Seconds without a byte from the policy before the call fails (504). Default 600. */
  upstreamTimeoutSec?: number;
}

export interface TrialUsage {
  calls: number;
  failedCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  policyVersions: string[];
  lastError: string | null;
}

export interface Gateway {
  /** http://host:port (agents add /v1 etc.). */
  readonly url: string;
  /** Registers a trial and returns a fresh random credential for it. */
  addTrial(trialName: string, opts: { trajectoryFile: string }): { apiKey: string };
  /** Revokes the credential at once; resolves when the trial's in-flight calls are recorded and its file is closed. */
  removeTrial(trialName: string): Promise<void>;
  usage(trialName: string): TrialUsage;
  close(): Promise<void>;
}

/** The three inbound dialects (upstream's `wire` names). */
export type Wire = "openai-chat" | "openai-responses" | "anthropic-messages";

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
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
