// `--message-tail-truncation`: upstream shortens long rows with the model's tokenizer (keep the
// first user turn and the newest suffix that fits, or stage pre-tokenized rows for its shim).
// This bench does neither yet; what it does is every check upstream makes before it loads the
// tokenizer, in upstream's words, so a run that upstream refuses is refused the same way here.

import { opt } from "../../options.js";
import { configValue, effectiveValue, overrideMap, positiveInt, type TomlTable } from "./plan.js";
import { SftRefusal } from "./refusal.js";

export const PRETOKENIZED = "custom-trainer-pretokenized";

export type TailMode = "off" | "keep-first-user" | typeof PRETOKENIZED;

const ALIASES: Record<string, TailMode> = {
  none: "off",
  false: "off",
  disabled: "off",
  "keep-user": "keep-first-user",
  "first-user": "keep-first-user",
  "keep-user-suffix": "keep-first-user",
  "token-suffix": PRETOKENIZED,
  "rendered-token-suffix": PRETOKENIZED,
  "custom-token-suffix": PRETOKENIZED,
  "custom-trainer-suffix": PRETOKENIZED,
  "custom-trainer-token-suffix": PRETOKENIZED,
};

export function tailMode(raw: string | undefined): TailMode {
  const value = (raw ?? "off").trim().toLowerCase().replaceAll("_", "-");
  const mode = ALIASES[value] ?? value;
  if (mode !== "off" && mode !== "keep-first-user" && mode !== PRETOKENIZED)
    throw new SftRefusal(
      `${opt("messageTailTruncation")} must be 'off', 'keep-first-user', or '${PRETOKENIZED}'`,
    );
  return mode;
}

/** What a truncation mode needs of the other flags and of the config (a model to tokenize with). */
export function checkTailTruncation(
  mode: TailMode,
  o: { toolDefsMode: string; chatTemplateKwargs: Record<string, unknown>; overrides: readonly string[] },
  config: TomlTable,
): void {
  if (mode === PRETOKENIZED) {
    if (o.toolDefsMode !== "omit")
      throw new SftRefusal(
        `${opt("messageTailTruncation", PRETOKENIZED)} requires ${opt("toolDefsMode", "omit")} because it stages ` +
          "pre-tokenized custom-trainer tensors instead of chat/tool schema rows",
      );
    if (Object.keys(o.chatTemplateKwargs).length > 0)
      throw new SftRefusal(
        `${opt("messageTailTruncation", PRETOKENIZED)} stages pre-tokenized tensors and cannot be ` +
          `combined with ${opt("chatTemplateKwargs")}`,
      );
  }
  if (mode === "off") return;
  const overrides = overrideMap(o.overrides);
  const model = effectiveValue(config, overrides, "model.name");
  if (model === undefined || model === null || String(model) === "")
    throw new SftRefusal(
      `${opt("messageTailTruncation")} requires model.name in the Prime-RL config or an explicit ` +
        opt("overrides", "model.name=..."),
    );
  // The longest row a batch row may hold: data.seq_len (128) x data.micro_batch_size (1).
  for (const [key, fallback] of [
    ["data.seq_len", 128],
    ["data.micro_batch_size", 1],
  ] as const)
    positiveInt(overrides.get(key) ?? configValue(config, key) ?? fallback, key);
}
