// A tokenizer we build ourselves for the tests: a byte-level BPE whose vocabulary is the 256 bytes
// (so a plain ASCII character is one token), one merge ("zz"), the ChatML specials as added tokens,
// and a ChatML-like chat template. Token counts of a rendered row can be worked out by hand.
import fs from "node:fs";
import path from "node:path";

/** GPT-2's byte-to-character table, which byte-level BPE vocabularies are written in. */
function byteChars(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const out: string[] = new Array(256);
  for (const b of printable) out[b] = String.fromCodePoint(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (out[b] === undefined) out[b] = String.fromCodePoint(256 + n++);
  return out;
}

export const IM_START = 300;
export const IM_END = 301;
export const ZZ = 256;

/**
 * Per message: `<|im_start|>` ROLE "\n" CONTENT [`<tool_call>`NAME ARGS`</tool_call>`]... `<|im_end|>` "\n",
 * that is len(role) + len(content) + 4 tokens. Tools first, as `<|im_start|>tools: a b<|im_end|>\n`.
 * The generation prompt `<|im_start|>assistant\n` is 11 tokens.
 */
export const CHATML_TEMPLATE =
  "{%- if tools %}<|im_start|>tools:{% for t in tools %} {{ t.function.name }}{% endfor %}<|im_end|>\n{% endif -%}" +
  "{%- for m in messages -%}" +
  "<|im_start|>{{ m.role }}\n{% if m.content is string %}{{ m.content }}{% endif %}" +
  "{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{{ c.function.name }} {{ c.function.arguments | tojson }}</tool_call>{% endfor %}{% endif %}" +
  "<|im_end|>\n{% endfor -%}" +
  "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif -%}";

export function tinyTokenizerJson(): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  byteChars().forEach((c, b) => {
    vocab[c] = b;
  });
  vocab.zz = ZZ;
  const added = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [added(IM_START, "<|im_start|>"), added(IM_END, "<|im_end|>")],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [["z", "z"]],
    },
  };
}

/** Writes tokenizer.json and tokenizer_config.json (with the template unless `template` is null) into dir. */
export function writeTinyTokenizer(dir: string, opts: { template?: string | null } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tinyTokenizerJson()));
  const template = opts.template === undefined ? CHATML_TEMPLATE : opts.template;
  const config: Record<string, unknown> = {
    eos_token: "<|im_end|>",
    tokenizer_class: "PreTrainedTokenizerFast",
  };
  if (template !== null) config.chat_template = template;
  fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(config));
  return dir;
}

/** A Hugging Face hub cache holding `org/name` at a commit, with refs/main pointing at it. */
export function writeHubCache(hub: string, modelId: string, sha: string, ref = "main"): string {
  const repo = path.join(hub, `models--${modelId.replace("/", "--")}`);
  fs.mkdirSync(path.join(repo, "refs"), { recursive: true });
  fs.writeFileSync(path.join(repo, "refs", ref), sha);
  return writeTinyTokenizer(path.join(repo, "snapshots", sha));
}

export const READ_TOOL = {
  type: "function",
  function: { name: "read", parameters: { type: "object", properties: {} } },
};
const readCall = (id: string) => ({ id, type: "function", function: { name: "read", arguments: "{}" } });

/**
 * The conversation the message-window tests window: system, task, an old read turn and a recent one
 * whose output is `recentResult`. With the template above and "recent", the row (completion "done",
 * tools [READ_TOOL]) is 176 tokens whole and 113 without the old turn.
 */
export function twoReadTurns(recentResult: string): Array<Record<string, unknown>> {
  return [
    { role: "system", content: "sys" },
    { role: "user", content: "task" },
    { role: "assistant", content: "", tool_calls: [readCall("call_old")] },
    { role: "tool", tool_call_id: "call_old", content: "xxxxxxxxxxxx" },
    { role: "assistant", content: "", tool_calls: [readCall("call_recent")] },
    { role: "tool", tool_call_id: "call_recent", content: recentResult },
  ];
}
