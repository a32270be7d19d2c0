// Chat completions in one shape: a streamed answer assembled from its chunks, or a plain answer
// read with vLLM's field variants (`reasoning` or `reasoning_content`) folded together.
import { GatewayError } from "./errors.js";
import type { ChatChoice, ChatCompletion, ChatToolCall, Json, JsonObject } from "./types.js";
import { isObject } from "./types.js";

interface ChoiceState {
  content: string;
  hasContent: boolean;
  reasoning: string;
  tools: Map<number, ChatToolCall>;
  finish: string | null;
  stop: Json | undefined;
  logprobs: Json[] | null;
}

export class ChatAccumulator {
  id = "";
  created = 0;
  model = "";
  usage: ChatCompletion["usage"] = null;
  readonly states = new Map<number, ChoiceState>();

  add(chunk: JsonObject): void {
    if (typeof chunk.id === "string" && this.id === "") this.id = chunk.id;
    if (typeof chunk.created === "number" && this.created === 0) this.created = chunk.created;
    if (typeof chunk.model === "string" && this.model === "") this.model = chunk.model;
    if (isObject(chunk.usage)) this.usage = usageOf(chunk.usage);
    if (!Array.isArray(chunk.choices)) return;
    for (const raw of chunk.choices) {
      if (!isObject(raw)) continue;
      const state = this.state(typeof raw.index === "number" ? raw.index : 0);
      const delta = isObject(raw.delta) ? raw.delta : {};
      if (typeof delta.content === "string") {
        state.content += delta.content;
        state.hasContent = true;
      }
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === "string") state.reasoning += reasoning;
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) addToolDelta(state, call);
      if (typeof raw.finish_reason === "string") state.finish = raw.finish_reason;
      if (raw.stop_reason !== undefined && raw.stop_reason !== null) state.stop = raw.stop_reason;
      if (isObject(raw.logprobs) && Array.isArray(raw.logprobs.content)) {
        state.logprobs = [...(state.logprobs ?? []), ...raw.logprobs.content];
      }
    }
  }

  toCompletion(): ChatCompletion {
    const choices: ChatChoice[] = [...this.states.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, s]) => {
        const choice: ChatChoice = {
          index,
          message: { role: "assistant", content: s.hasContent ? s.content : null },
          finish_reason: s.finish,
        };
        if (s.reasoning !== "") choice.message.reasoning_content = s.reasoning;
        if (s.tools.size > 0) choice.message.tool_calls = [...s.tools.values()];
        if (s.stop !== undefined) choice.stop_reason = s.stop;
        if (s.logprobs !== null) choice.logprobs = { content: s.logprobs };
        return choice;
      });
    return {
      id: this.id,
      object: "chat.completion",
      created: this.created,
      model: this.model,
      choices,
      usage: this.usage,
    };
  }

  private state(index: number): ChoiceState {
    let s = this.states.get(index);
    if (!s) {
      s = {
        content: "",
        hasContent: false,
        reasoning: "",
        tools: new Map(),
        finish: null,
        stop: undefined,
        logprobs: null,
      };
      this.states.set(index, s);
    }
    return s;
  }
}

function addToolDelta(state: ChoiceState, raw: Json): void {
  if (!isObject(raw)) return;
  // Servers that leave out `index` continue the last call unless the delta starts a new one (an id).
  const fresh = typeof raw.id === "string" && raw.id !== "";
  const index = typeof raw.index === "number" ? raw.index : Math.max(0, state.tools.size - (fresh ? 0 : 1));
  const fn = isObject(raw.function) ? raw.function : {};
  let call = state.tools.get(index);
  if (!call) {
    call = { id: "", type: "function", function: { name: "", arguments: "" } };
    state.tools.set(index, call);
  }
  if (typeof raw.id === "string" && raw.id !== "") call.id = raw.id;
  if (typeof fn.name === "string") call.function.name += fn.name;
  if (typeof fn.arguments === "string") call.function.arguments += fn.arguments;
}

/** The provider's prompt-cache fields, kept as it sent them (usage.ts reads them for cost). */
const CACHE_FIELDS = [
  "prompt_tokens_details",
  "prompt_cache_hit_tokens",
  "prompt_cache_miss_tokens",
  "cache_read_input_tokens",
  "cache_creation_input_tokens",
] as const;

function usageOf(u: JsonObject): ChatCompletion["usage"] {
  const prompt = typeof u.prompt_tokens === "number" ? u.prompt_tokens : 0;
  const completion = typeof u.completion_tokens === "number" ? u.completion_tokens : 0;
  const usage: NonNullable<ChatCompletion["usage"]> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  for (const k of CACHE_FIELDS) if (u[k] !== undefined) usage[k] = u[k];
  return usage;
}

/** Reads a plain (non-streamed) upstream answer; a body without choices is a malformed answer. */
export function readCompletion(body: JsonObject): ChatCompletion {
  if (!Array.isArray(body.choices)) {
    throw new GatewayError(502, "policy server sent a chat completion without `choices`");
  }
  const choices: ChatChoice[] = body.choices.filter(isObject).map((raw, i) => {
    const m = isObject(raw.message) ? raw.message : {};
    const reasoning = m.reasoning_content ?? m.reasoning;
    const choice: ChatChoice = {
      index: typeof raw.index === "number" ? raw.index : i,
      message: { role: "assistant", content: typeof m.content === "string" ? m.content : null },
      finish_reason: typeof raw.finish_reason === "string" ? raw.finish_reason : null,
    };
    if (typeof reasoning === "string" && reasoning !== "") choice.message.reasoning_content = reasoning;
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      choice.message.tool_calls = m.tool_calls.filter(isObject).map((c) => {
        const fn = isObject(c.function) ? c.function : {};
        return {
          id: typeof c.id === "string" ? c.id : "",
          type: "function" as const,
          function: {
            name: typeof fn.name === "string" ? fn.name : "",
            arguments: typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
          },
        };
      });
    }
    if (raw.stop_reason !== undefined && raw.stop_reason !== null) choice.stop_reason = raw.stop_reason;
    return choice;
  });
  return {
    id: typeof body.id === "string" ? body.id : "",
    object: "chat.completion",
    created: typeof body.created === "number" ? body.created : Math.floor(Date.now() / 1000),
    model: typeof body.model === "string" ? body.model : "",
    choices,
    usage: isObject(body.usage) ? usageOf(body.usage) : null,
  };
}
