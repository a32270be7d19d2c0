// Turns a scripted reply into what a policy would have sampled: the message, the sampled ids, and the
// stream pieces (each a delta plus the ids it covers), so streamed and non-streamed replies agree.
import {
  type AssistantTurn,
  assistantBodyParts,
  IM_END_ID,
  type TemplatePart,
  tokenizeParts,
  toolCallParts,
  VOCAB_SIZE,
} from "./chat-template.js";
import type { ScriptedToolCall } from "./script.js";

export interface SampledToolCall {
  id: string;
  name: string;
  arguments: string;
}
export interface StreamPiece {
  delta: Record<string, unknown>;
  ids: number[];
}
export interface SampledTurn {
  reasoning: string | null;
  content: string | null;
  toolCalls: SampledToolCall[];
  finishReason: string;
  completionIds: number[];
  /** Consecutive slices of completionIds with the delta each slice streams as; the last is <|im_end|>. */
  pieces: StreamPiece[];
}

export interface TextReply {
  content?: string;
  reasoning?: string;
  tool_calls?: ScriptedToolCall[];
  finish_reason?: string;
}

/** Characters per streamed text delta; small enough to look like a token stream, big enough to be cheap. */
const CHUNK_CHARS = 16;

export function sampleTurn(reply: TextReply, ids: { turn: number; conversationKey: string }): SampledTurn {
  const toolCalls = (reply.tool_calls ?? []).map((call, i) => ({
    id: `call_${ids.turn}_${i}_${ids.conversationKey}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const reasoning = reply.reasoning ? reply.reasoning : null;
  const text = reply.content ?? "";
  const turn: AssistantTurn = { reasoning, content: text, toolCalls };
  const pieces = streamPieces(turn);
  const completionIds = pieces.flatMap((piece) => piece.ids);
  return {
    reasoning,
    content: text === "" && toolCalls.length > 0 ? null : text,
    toolCalls,
    finishReason: reply.finish_reason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
    completionIds,
    pieces,
  };
}

function streamPieces(turn: AssistantTurn): StreamPiece[] {
  const pieces: StreamPiece[] = [];
  // Template markup between deltas is attached to the piece before it (or after, at the very start).
  let pending: TemplatePart[] = [];
  const emit = (delta: Record<string, unknown>, parts: TemplatePart[]) => {
    pieces.push({ delta, ids: tokenizeParts([...pending, ...parts]) });
    pending = [];
  };
  const trail = (parts: TemplatePart[]) => {
    const last = pieces.at(-1);
    if (last) last.ids.push(...tokenizeParts(parts));
    else pending.push(...parts);
  };
  if (turn.reasoning) {
    pending.push({ special: "<think>" }, "\n");
    for (const chunk of chunkText(turn.reasoning))
      emit({ reasoning: chunk, reasoning_content: chunk }, [chunk]);
    trail(["\n", { special: "</think>" }, "\n\n"]);
  }
  if (turn.content) for (const chunk of chunkText(turn.content)) emit({ content: chunk }, [chunk]);
  (turn.toolCalls ?? []).forEach((call, index) => {
    if (index > 0 || turn.content) trail(["\n"]);
    const [open, , close] = toolCallParts(call) as [TemplatePart, string, TemplatePart];
    const id = (call as SampledToolCall).id;
    const header = `\n{"name": ${JSON.stringify(call.name)}, "arguments": `;
    emit({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }, [
      open,
      header,
    ]);
    for (const chunk of chunkText(call.arguments)) {
      emit({ tool_calls: [{ index, function: { arguments: chunk } }] }, [chunk]);
    }
    trail(["}\n", close]);
  });
  pieces.push({ delta: {}, ids: [...tokenizeParts(pending), IM_END_ID] });
  return pieces;
}

/** Splits text into runs of CHUNK_CHARS code points, never inside a character. */
function chunkText(text: string): string[] {
  const chars = [...text];
  const chunks: string[] = [];
  for (let i = 0; i < chars.length; i += CHUNK_CHARS) chunks.push(chars.slice(i, i + CHUNK_CHARS).join(""));
  return chunks;
}

/** The template rendering of a sampled turn; equal to completionIds minus the final <|im_end|>. */
export function sampledBodyParts(sampled: SampledTurn): TemplatePart[] {
  return assistantBodyParts({
    reasoning: sampled.reasoning,
    content: sampled.content,
    toolCalls: sampled.toolCalls,
  });
}

/** A deterministic log-probability in (-5, 0) for token `id` at completion position `position`. */
export function syntheticLogprob(id: number, position: number): number {
  const mixed = Math.imul(id + 1, 2654435761) ^ Math.imul(position + 1, 40503);
  return -(((mixed >>> 0) % 4999) + 1) / 1000;
}

/** The k most likely alternatives at a position: the sampled token first, then others, descending. */
export function topAlternatives(id: number, position: number, k: number): { id: number; logprob: number }[] {
  const sampled = syntheticLogprob(id, position);
  const top: { id: number; logprob: number }[] = [];
  for (let j = 0; j < k; j++) {
    top.push({ id: (id + j) % VOCAB_SIZE, logprob: Number((sampled - j * 0.5).toFixed(3)) });
  }
  return top;
}
