// vLLM's OpenAI-compatible wire format for chat completions: the non-streamed body and the SSE chunks,
// including its extensions (return_token_ids) and SGLang's sglext ids. Field order follows vLLM's models.

import { tokenBytes, tokenText } from "./chat-template.js";
import { deepseekCacheFields } from "./prompt-cache.js";
import { type SampledTurn, syntheticLogprob, topAlternatives } from "./sample.js";

/** What the request asked for, after the server's own switches (tokenIds, logprobs) were applied. */
export interface WireRequest {
  id: string;
  created: number;
  model: string;
  promptIds: number[];
  /** true: vLLM's return_token_ids; false: asked not to; undefined: the server does not support it. */
  tokenIds: boolean | undefined;
  /** null: no logprobs; k: logprobs with k alternatives each. */
  topLogprobs: number | null;
  sglextInput: boolean;
  sglextOutput: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
  /** Tokens of the prompt a stand-in provider's cache held (prompt-cache.ts); absent: no cache fields. */
  cacheHit?: number;
}

export function logprobsContent(ids: readonly number[], start: number, k: number) {
  return ids.map((id, i) => ({
    token: tokenText(id),
    logprob: syntheticLogprob(id, start + i),
    bytes: tokenBytes(id),
    top_logprobs: topAlternatives(id, start + i, k).map((alt) => ({
      token: tokenText(alt.id),
      logprob: alt.logprob,
      bytes: tokenBytes(alt.id),
    })),
  }));
}

export function completionBody(req: WireRequest, turn: SampledTurn): Record<string, unknown> {
  const reasoning = turn.reasoning;
  const choice: Record<string, unknown> = {
    index: 0,
    message: {
      role: "assistant",
      content: turn.content,
      refusal: null,
      annotations: null,
      audio: null,
      function_call: null,
      tool_calls: turn.toolCalls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
      // vLLM >= 0.11 names it `reasoning`; earlier versions `reasoning_content`. Clients read either.
      reasoning,
      reasoning_content: reasoning,
    },
    logprobs:
      req.topLogprobs === null ? null : { content: logprobsContent(turn.completionIds, 0, req.topLogprobs) },
    finish_reason: turn.finishReason,
    stop_reason: null,
  };
  if (req.tokenIds !== undefined) choice.token_ids = req.tokenIds ? turn.completionIds : null;
  const body: Record<string, unknown> = {
    id: req.id,
    object: "chat.completion",
    created: req.created,
    model: req.model,
    choices: [choice],
    service_tier: null,
    system_fingerprint: null,
    usage: {
      ...usage(req.promptIds.length, turn.completionIds.length),
      prompt_tokens_details: null,
      ...cacheFields(req),
    },
    prompt_logprobs: null,
  };
  if (req.tokenIds !== undefined) body.prompt_token_ids = req.tokenIds ? req.promptIds : null;
  body.kv_transfer_params = null;
  const sglext = sglextOf(req, turn);
  if (sglext) body.sglext = sglext;
  return body;
}

/** The SSE chunks of a streamed reply, in order, without the final "[DONE]". */
export function streamChunks(req: WireRequest, turn: SampledTurn): Record<string, unknown>[] {
  const head = { id: req.id, object: "chat.completion.chunk", created: req.created, model: req.model };
  const promptCount = req.promptIds.length;
  const first: Record<string, unknown> = {
    ...head,
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
  };
  if (req.tokenIds) first.prompt_token_ids = req.promptIds;
  if (req.continuousUsage) first.usage = usage(promptCount, 0);
  const chunks = [first];
  let position = 0;
  turn.pieces.forEach((piece, i) => {
    const last = i === turn.pieces.length - 1;
    const choice: Record<string, unknown> = {
      index: 0,
      delta: piece.delta,
      logprobs:
        req.topLogprobs === null ? null : { content: logprobsContent(piece.ids, position, req.topLogprobs) },
      finish_reason: last ? turn.finishReason : null,
    };
    if (last) choice.stop_reason = null;
    if (req.tokenIds !== undefined) choice.token_ids = req.tokenIds ? piece.ids : null;
    position += piece.ids.length;
    const chunk: Record<string, unknown> = { ...head, choices: [choice] };
    if (req.continuousUsage) chunk.usage = usage(promptCount, position);
    chunks.push(chunk);
  });
  const sglext = sglextOf(req, turn);
  if (sglext) chunks.push({ ...head, choices: [], sglext });
  if (req.includeUsage)
    chunks.push({ ...head, choices: [], usage: { ...usage(promptCount, position), ...cacheFields(req) } });
  return chunks;
}

function cacheFields(req: WireRequest): Record<string, unknown> {
  return req.cacheHit === undefined ? {} : deepseekCacheFields(req.promptIds.length, req.cacheHit);
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, total_tokens: prompt + completion, completion_tokens: completion };
}

function sglextOf(req: WireRequest, turn: SampledTurn): Record<string, unknown> | undefined {
  if (!req.sglextInput && !req.sglextOutput) return undefined;
  const ext: Record<string, unknown> = {};
  if (req.sglextInput) ext.input_ids = req.promptIds;
  if (req.sglextOutput) ext.output_ids = [turn.completionIds];
  return ext;
}
