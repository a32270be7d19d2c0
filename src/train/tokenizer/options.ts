// The tokenizer flags of convert and validate, checked as upstream checks them, and the tokenizer
// loaded once before any row is read (a missing tokenizer fails before anything is written).
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import { type LoadedTokenizer, loadTokenizer } from "./load.js";
import { MessageWindow } from "./window.js";

export type ContextMode = "full" | "message-window";

/**
 * The row format asked for (validate's RowFormat, or none): only trl-sft rows are tokenized here. A
 * plain string, so the tokenizer needs nothing of validate, which measures rows with it.
 */
type Format = string | undefined;
export const CONTEXT_MODES: readonly ContextMode[] = ["full", "message-window"];

export interface TokenizerFlags {
  /** --tokenizer: a folder or tokenizer.json, or a Hugging Face model id in the local cache. */
  tokenizer?: string;
  tokenizerRevision?: string;
  maxLength?: number;
}

/** "--tokenizer/--tokenizer-revision/--max-length", or the library's option names from code. */
const tokenizerNames = () => [opt("tokenizer"), opt("tokenizerRevision"), opt("maxLength")].join("/");

function anyTokenizerFlag(f: TokenizerFlags): boolean {
  return f.tokenizer !== undefined || f.tokenizerRevision !== undefined || f.maxLength !== undefined;
}

function assertMaxLength(maxLength: number | undefined): void {
  if (maxLength !== undefined && !(Number.isInteger(maxLength) && maxLength >= 1))
    throw new UserInputError(
      `${opt("maxLength")}: give a whole number of tokens of at least 1, not ${maxLength}.`,
    );
}

/** convert: the message window to apply to trl-sft rows, or null with --context-policy full. */
export async function messageWindowOf(
  format: Format,
  f: TokenizerFlags & { contextPolicy?: ContextMode },
): Promise<MessageWindow | null> {
  const mode = f.contextPolicy ?? "full";
  if (!CONTEXT_MODES.includes(mode))
    throw new UserInputError(`${opt("contextPolicy")}: use full or message-window, not "${mode}".`);
  if (format !== "trl-sft") {
    if (mode !== "full" || anyTokenizerFlag(f))
      throw new UserInputError(
        `${opt("contextPolicy")}/${tokenizerNames()} are supported only with ${opt("format", "trl-sft")}`,
      );
    return null;
  }
  if (mode === "full") {
    if (anyTokenizerFlag(f))
      throw new UserInputError(
        `${tokenizerNames()} require ${opt("contextPolicy", "message-window")} during conversion`,
      );
    return null;
  }
  if (f.tokenizer === undefined || f.maxLength === undefined)
    throw new UserInputError(
      `${opt("contextPolicy", "message-window")} requires ${opt("tokenizer")} and ${opt("maxLength")}`,
    );
  assertMaxLength(f.maxLength);
  return new MessageWindow(await loadTokenizer(f.tokenizer, f.tokenizerRevision ?? null), f.maxLength);
}

/** validate: the tokenizer to measure trl-sft rows with, or null without --tokenizer. */
export async function validationTokenizerOf(
  format: Format,
  f: TokenizerFlags,
): Promise<LoadedTokenizer | null> {
  if (!anyTokenizerFlag(f)) return null;
  if (format !== "trl-sft")
    throw new UserInputError(`${tokenizerNames()} are supported only with ${opt("format", "trl-sft")}`);
  assertMaxLength(f.maxLength);
  if (f.tokenizer === undefined)
    throw new UserInputError(
      f.maxLength !== undefined
        ? `${opt("maxLength")} requires ${opt("tokenizer")}`
        : `${opt("tokenizerRevision")} requires ${opt("tokenizer")}`,
    );
  return loadTokenizer(f.tokenizer, f.tokenizerRevision ?? null);
}
