// A deterministic byte-level tokenizer and ChatML chat template, so "token-in/token-out" can be checked
// without a model: the ids of a reply replayed unchanged reappear verbatim in the next prompt.

export const SPECIAL_TOKENS = [
  "<|endoftext|>",
  "<|im_start|>",
  "<|im_end|>",
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/** Byte b has id b + BYTE_OFFSET; ids below it are the special tokens in SPECIAL_TOKENS order. */
export const BYTE_OFFSET = 16;
export const VOCAB_SIZE = BYTE_OFFSET + 256;
export const IM_END_ID = SPECIAL_TOKENS.indexOf("<|im_end|>");

/** A rendered prompt: text is tokenized byte by byte, specials come only from the template. */
export type TemplatePart = string | { special: SpecialToken };

export interface TemplateToolCall {
  name: string;
  arguments: string;
}
export interface AssistantTurn {
  reasoning?: string | null;
  content?: string | null;
  toolCalls?: TemplateToolCall[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function specialId(token: SpecialToken): number {
  return SPECIAL_TOKENS.indexOf(token);
}

/** Tokenizes plain text; special-token strings inside it are recognized, as HF tokenizers do by default. */
export function tokenize(text: string): number[] {
  const ids: number[] = [];
  let plainStart = 0;
  let i = text.indexOf("<");
  while (i !== -1) {
    const special = SPECIAL_TOKENS.find((token) => text.startsWith(token, i));
    if (special) {
      pushBytes(ids, text.slice(plainStart, i));
      ids.push(specialId(special));
      plainStart = i + special.length;
      i = text.indexOf("<", plainStart);
    } else {
      i = text.indexOf("<", i + 1);
    }
  }
  pushBytes(ids, text.slice(plainStart));
  return ids;
}

export function tokenizeParts(parts: TemplatePart[]): number[] {
  const ids: number[] = [];
  for (const part of parts) {
    if (typeof part === "string") pushBytes(ids, part);
    else ids.push(specialId(part.special));
  }
  return ids;
}

export function detokenize(ids: readonly number[]): string {
  let out = "";
  let bytes: number[] = [];
  for (const id of ids) {
    if (id >= BYTE_OFFSET && id < VOCAB_SIZE) {
      bytes.push(id - BYTE_OFFSET);
      continue;
    }
    out += decoder.decode(Uint8Array.from(bytes));
    bytes = [];
    out += SPECIAL_TOKENS[id] ?? "";
  }
  return out + decoder.decode(Uint8Array.from(bytes));
}

/** The token's text as logprobs report it; a lone non-ASCII byte uses OpenAI's "bytes:\xNN" form. */
export function tokenText(id: number): string {
  const special = SPECIAL_TOKENS[id];
  if (special) return special;
  const byte = id - BYTE_OFFSET;
  if (byte < 0x80) return String.fromCharCode(byte);
  return `bytes:\\x${byte.toString(16).padStart(2, "0")}`;
}

export function tokenBytes(id: number): number[] {
  const special = SPECIAL_TOKENS[id];
  if (special) return [...encoder.encode(special)];
  return [id - BYTE_OFFSET];
}

function pushBytes(ids: number[], text: string): void {
  if (!text) return;
  for (const byte of encoder.encode(text)) ids.push(byte + BYTE_OFFSET);
}

// ---- template ----

/** The assistant turn body after "<|im_start|>assistant\n" (without the closing <|im_end|>). */
export function assistantBodyParts(turn: AssistantTurn): TemplatePart[] {
  const parts: TemplatePart[] = [];
  if (turn.reasoning)
    parts.push({ special: "<think>" }, `\n${turn.reasoning}\n`, { special: "</think>" }, "\n\n");
  if (turn.content) parts.push(turn.content);
  (turn.toolCalls ?? []).forEach((call, i) => {
    if (i > 0 || turn.content) parts.push("\n");
    parts.push(...toolCallParts(call));
  });
  return parts;
}

export function toolCallParts(call: TemplateToolCall): TemplatePart[] {
  return [
    { special: "<tool_call>" },
    `\n{"name": ${JSON.stringify(call.name)}, "arguments": ${call.arguments}}\n`,
    { special: "</tool_call>" },
  ];
}

/** The ids a policy samples for a turn: the body followed by <|im_end|>. */
export function completionTokenIds(turn: AssistantTurn): number[] {
  return tokenizeParts([...assistantBodyParts(turn), { special: "<|im_end|>" }]);
}

/** Renders OpenAI chat messages (and the tools offered) ChatML-style, ending with the generation prompt. */
export function renderChatParts(messages: readonly unknown[], tools?: readonly unknown[]): TemplatePart[] {
  const parts: TemplatePart[] = [];
  const toolBlock = tools && tools.length > 0 ? renderTools(tools) : "";
  const first = asRecord(messages[0]);
  const systemFirst = first?.role === "system";
  if (toolBlock && !systemFirst) parts.push(...turn("system", toolBlock.trimStart()));
  messages.forEach((raw, i) => {
    const message = asRecord(raw) ?? {};
    const role = typeof message.role === "string" ? message.role : "user";
    if (role === "assistant") {
      parts.push({ special: "<|im_start|>" }, "assistant\n", ...assistantBodyParts(historyTurn(message)));
      parts.push({ special: "<|im_end|>" }, "\n");
      return;
    }
    const text = contentText(message.content);
    parts.push(...turn(role, i === 0 && systemFirst ? text + toolBlock : text));
  });
  parts.push({ special: "<|im_start|>" }, "assistant\n");
  return parts;
}

export function renderChat(messages: readonly unknown[], tools?: readonly unknown[]): string {
  return renderChatParts(messages, tools)
    .map((part) => (typeof part === "string" ? part : part.special))
    .join("");
}

export function promptTokenIds(messages: readonly unknown[], tools?: readonly unknown[]): number[] {
  return tokenizeParts(renderChatParts(messages, tools));
}

/** The text of a message's content: a string, null, or OpenAI content parts. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => {
      const record = asRecord(part);
      if (typeof record?.text === "string") return record.text;
      return `[${typeof record?.type === "string" ? record.type : "part"}]`;
    })
    .join("");
}

function turn(role: string, text: string): TemplatePart[] {
  return [{ special: "<|im_start|>" }, `${role}\n${text}`, { special: "<|im_end|>" }, "\n"];
}

function renderTools(tools: readonly unknown[]): string {
  const lines = tools.map((tool) => JSON.stringify(asRecord(tool)?.function ?? tool));
  return `\n\n# Tools\n\n<tools>\n${lines.join("\n")}\n</tools>`;
}

function historyTurn(message: Record<string, unknown>): AssistantTurn {
  const reasoning = [message.reasoning_content, message.reasoning].find((r) => typeof r === "string");
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return {
    reasoning: reasoning as string | undefined,
    content: contentText(message.content),
    toolCalls: calls.map((call) => {
      const fn = asRecord(asRecord(call)?.function) ?? {};
      const args = fn.arguments;
      return {
        name: typeof fn.name === "string" ? fn.name : "",
        arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
      };
    }),
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
