// A trl-sft row measured as the trainer sees it: rendered through the tokenizer's chat template, then
// tokenized. The tokens the completion adds after the prompt's generation prompt are the ones the
// trainer learns from; a row with none, or whose prompt renders differently before the assistant's
// turn begins, would train on the wrong tokens, so it is refused.
import { Template } from "@huggingface/jinja";
import type { ChatMessage } from "../../schemas/train-rows.js";
import type { LoadedTokenizer } from "./load.js";

export interface TrlConversation {
  prompt: ChatMessage[];
  completion: ChatMessage[];
  tools?: unknown[];
}

export interface RowTokens {
  /** Tokens of prompt + completion. */
  tokens: number;
  /** Tokens the completion adds after the prompt and its generation prompt. */
  trainable: number;
}

/** A row the tokenizer cannot train on as it is: a data problem (exit 1), named by the caller. */
export class TokenizationError extends Error {
  override name = "TokenizationError";
}

// TRL's training templates mark the assistant's tokens with {% generation %} blocks; we count those
// tokens from the prompt boundary instead, so the tags only need to render as nothing.
const GENERATION_TAG = /\{%-?\s*(end)?generation\s*-?%\}/g;

const templates = new WeakMap<LoadedTokenizer, Template>();

function templateOf(tok: LoadedTokenizer): Template {
  let t = templates.get(tok);
  if (!t) {
    try {
      t = new Template(tok.chatTemplate.replace(GENERATION_TAG, ""));
    } catch (err) {
      throw new TokenizationError(
        `the chat template of ${tok.id} does not parse (${(err as Error).message}).`,
      );
    }
    templates.set(tok, t);
  }
  return t;
}

export function renderChat(
  tok: LoadedTokenizer,
  messages: ChatMessage[],
  tools: unknown[] | undefined,
  addGenerationPrompt: boolean,
): string {
  try {
    return templateOf(tok).render({
      ...tok.specialTokens,
      messages,
      // As transformers passes them: no tools is None, not an empty list.
      tools: tools && tools.length > 0 ? tools : undefined,
      // raise_exception and the other helpers templates call are the engine's own.
      add_generation_prompt: addGenerationPrompt,
    });
  } catch (err) {
    if (err instanceof TokenizationError) throw err;
    throw new TokenizationError(`the chat template of ${tok.id} failed: ${(err as Error).message}`);
  }
}

export function chatTokens(
  tok: LoadedTokenizer,
  messages: ChatMessage[],
  tools: unknown[] | undefined,
  addGenerationPrompt = false,
): number[] {
  return tok.encode(renderChat(tok, messages, tools, addGenerationPrompt));
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** Length of prompt + completion only: what the message window compares with --max-length. */
export function rowLength(tok: LoadedTokenizer, row: TrlConversation): number {
  return chatTokens(tok, [...row.prompt, ...row.completion], row.tools).length;
}

/**
 * The row's token count and trainable tokens, or a TokenizationError. The prompt with its generation
 * prompt should be a token prefix of the whole row. A template may render the generation prompt a
 * little differently from the assistant turn it opens (an empty think block, say): that is allowed
 * as long as the two agree up to where the assistant's turn begins.
 */
export function rowTokens(tok: LoadedTokenizer, row: TrlConversation, maxLength: number | null): RowTokens {
  const prompt = chatTokens(tok, row.prompt, row.tools, true);
  const full = chatTokens(tok, [...row.prompt, ...row.completion], row.tools);
  const shared = commonPrefix(prompt, full);
  if (shared < prompt.length) {
    const before = chatTokens(tok, row.prompt, row.tools, false);
    if (commonPrefix(before, full) < before.length || shared < before.length) {
      throw new TokenizationError("tokenized prompt differs before the assistant generation boundary");
    }
  }
  const trainable = full.length - prompt.length;
  if (trainable < 1) throw new TokenizationError("no trainable assistant completion tokens");
  if (maxLength !== null && full.length > maxLength) {
    throw new TokenizationError(`tokenized length ${full.length} exceeds max_length ${maxLength}`);
  }
  return { tokens: full.length, trainable };
}
