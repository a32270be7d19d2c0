// Gemini's generateContent API (what Gemini CLI speaks) as chat: `contents` turns of role user or
// model made of parts, walked one way for the gateway and for train. A model turn's text parts are
// its content, its `thought` parts its reasoning, its functionCall parts tool calls; a user turn's
// functionResponse parts are tool messages, placed before its text. Gemini's calls carry an `id`
// only on newer models: a call without one is given one, and its response (matched by position
// within the turn, as the API pairs them, or by name) gets the same.

import { isObj, type Obj, type Turn } from "./turn.js";

/** A functionResponse's `response` as text: Gemini CLI's `{output: "..."}` is its output. */
export function geminiResultText(response: unknown): string {
  if (isObj(response) && Object.keys(response).length === 1 && typeof response.output === "string")
    return response.output;
  return typeof response === "string" ? response : JSON.stringify(response ?? {});
}

export interface GeminiCall {
  id: string;
  name: string;
  args: unknown;
}

export interface GeminiStyle<Content, Call> {
  /** A message's content from its text parts (a user's text parts are paragraphs, a model's pieces). */
  text(texts: string[], role: "user" | "assistant"): Content;
  call(c: GeminiCall): Call;
  /** A functionResponse's `response` as a tool message's content. */
  result(response: unknown): Content;
  /** The id of a call that came without one. */
  idFor(turn: number, n: number): string;
}

const parts = (c: Obj): Obj[] => (Array.isArray(c.parts) ? c.parts.filter(isObj) : []);
const textOf = (p: Obj): string | null => (typeof p.text === "string" ? p.text : null);

/** The system instruction's text parts, joined by newlines ("" when there is none). */
export function geminiSystem(instruction: unknown): string {
  if (typeof instruction === "string") return instruction;
  if (!isObj(instruction)) return "";
  return parts(instruction)
    .flatMap((p) => textOf(p) ?? [])
    .join("\n");
}

export function geminiTurns<Content, Call>(
  contents: unknown,
  style: GeminiStyle<Content, Call>,
): Turn<Content, Call>[] {
  const turns: Turn<Content, Call>[] = [];
  /** The ids of the last model turn's calls, by position and by name, for the responses that follow. */
  let pending: GeminiCall[] = [];
  (Array.isArray(contents) ? contents.filter(isObj) : []).forEach((c, turn) => {
    const ps = parts(c);
    if (c.role === "model") {
      const assistant = geminiAssistant(ps, style, turn);
      pending = assistant.calls;
      turns.push(assistant.turn);
      return;
    }
    const texts: string[] = [];
    let n = 0;
    for (const p of ps) {
      const r = isObj(p.functionResponse) ? p.functionResponse : null;
      if (!r) {
        const t = textOf(p);
        if (t !== null) texts.push(t);
        continue;
      }
      const name = String(r.name ?? "");
      const byId = typeof r.id === "string" && r.id !== "" ? r.id : null;
      const matched =
        byId ?? (pending[n]?.name === name ? pending[n]?.id : pending.find((x) => x.name === name)?.id);
      turns.push({
        role: "tool",
        tool_call_id: matched ?? style.idFor(turn, n),
        content: style.result(r.response),
      });
      n++;
    }
    if (texts.length > 0) turns.push({ role: "user", content: style.text(texts, "user") });
    pending = [];
  });
  return turns;
}

/** A model turn's parts (a request's history, or an answer's candidate) as one assistant message. */
export function geminiAssistant<Content, Call>(
  ps: Obj[],
  style: GeminiStyle<Content, Call>,
  turn: number,
): { turn: Turn<Content, Call>; calls: GeminiCall[] } {
  const texts: string[] = [];
  const thoughts: string[] = [];
  const calls: GeminiCall[] = [];
  for (const p of ps) {
    const fc = isObj(p.functionCall) ? p.functionCall : null;
    if (fc) {
      const id = typeof fc.id === "string" && fc.id !== "" ? fc.id : style.idFor(turn, calls.length);
      calls.push({ id, name: String(fc.name ?? ""), args: fc.args ?? {} });
      continue;
    }
    const t = textOf(p);
    if (t !== null) (p.thought === true ? thoughts : texts).push(t);
  }
  const message: Turn<Content, Call> = { role: "assistant", content: style.text(texts, "assistant") };
  if (thoughts.length > 0) message.reasoning_content = thoughts.join("");
  if (calls.length > 0) message.tool_calls = calls.map((c) => style.call(c));
  return { turn: message, calls };
}

/**
 * Function declarations as chat functions: `parametersJsonSchema` (JSON Schema) as it is, or
 * `parameters` (Gemini's OpenAPI subset, types in capitals) with its types in JSON Schema's case.
 */
export function geminiToolDefs(tools: unknown): { name: string; description?: string; parameters: Obj }[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isObj).flatMap((t) =>
    (Array.isArray(t.functionDeclarations) ? t.functionDeclarations.filter(isObj) : []).map((d) => {
      const schema = isObj(d.parametersJsonSchema)
        ? d.parametersJsonSchema
        : isObj(d.parameters)
          ? lowerTypes(d.parameters)
          : { type: "object" };
      const def: { name: string; description?: string; parameters: Obj } = {
        name: String(d.name ?? ""),
        parameters: schema as Obj,
      };
      if (typeof d.description === "string") def.description = d.description;
      return def;
    }),
  );
}

function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!isObj(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === "type" && typeof v === "string" ? v.toLowerCase() : lowerTypes(v),
    ]),
  );
}
