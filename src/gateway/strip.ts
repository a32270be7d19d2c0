// What the gateway added to a request for capture is taken out of the answer before the agent sees it,
// and token ids never enter the recorded body (they live in metadata.token_capture).
import type { JsonObject } from "./types.js";
import { isObject } from "./types.js";

/** What the agent itself asked for in its chat request. */
export interface AgentAsked {
  logprobs: boolean;
  topLogprobs: boolean;
  tokenIds: boolean;
  includeUsage: boolean;
}

export function agentAsked(body: JsonObject): AgentAsked {
  const options = body.stream_options;
  return {
    logprobs: body.logprobs === true,
    topLogprobs: typeof body.top_logprobs === "number" && body.top_logprobs > 0,
    tokenIds:
      body.return_token_ids === true ||
      body.return_input_ids_in_sglext === true ||
      body.return_output_ids_in_sglext === true,
    includeUsage: isObject(options) && options.include_usage === true,
  };
}

export const ASKED_NOTHING: AgentAsked = {
  logprobs: false,
  topLogprobs: false,
  tokenIds: false,
  includeUsage: false,
};

/** Removes, in place, the capture fields the agent did not ask for from a completion or chunk. */
export function stripForAgent(body: JsonObject, asked: AgentAsked): JsonObject {
  if (!asked.tokenIds) removeIds(body);
  if (asked.logprobs && asked.topLogprobs) return body;
  if (!Array.isArray(body.choices)) return body;
  for (const choice of body.choices) {
    if (!isObject(choice) || !("logprobs" in choice)) continue;
    if (!asked.logprobs) {
      delete choice.logprobs;
      continue;
    }
    const logprobs = choice.logprobs;
    // Copies, not edits: the capture collector holds the same entries.
    if (isObject(logprobs) && Array.isArray(logprobs.content)) {
      choice.logprobs = {
        ...logprobs,
        content: logprobs.content.map((e) => (isObject(e) ? { ...e, top_logprobs: [] } : e)),
      };
    }
  }
  return body;
}

/** A streamed chunk for the agent, or null when nothing in it is the agent's (ids-only or unasked usage). */
export function stripChunkForAgent(chunk: JsonObject, asked: AgentAsked): JsonObject | null {
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  if (choices.length === 0) {
    const hasUsage = isObject(chunk.usage);
    if (!hasUsage || !asked.includeUsage) {
      if (!asked.tokenIds || !isObject(chunk.sglext)) return null;
    }
  } else if (!asked.includeUsage) {
    delete chunk.usage;
  }
  return stripForAgent(chunk, asked);
}

/** Removes token ids (prompt and sampled, vLLM and SGLang styles) in place. */
export function removeIds(body: JsonObject): JsonObject {
  delete body.prompt_token_ids;
  delete body.sglext;
  if (Array.isArray(body.choices)) {
    for (const choice of body.choices) if (isObject(choice)) delete choice.token_ids;
  }
  return body;
}
