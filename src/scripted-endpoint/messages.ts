// The scripted policy as Anthropic's Messages API answers (POST /v1/messages): the key in x-api-key,
// the anthropic-version header required, requests checked as the API checks them (so a gateway that
// converts badly is refused here, as Anthropic would refuse it), the Message body and the event flow
// of the Messages docs, errors as `{type: "error", error: {type, message}}`, and prompt caching as
// Anthropic documents it: only a request that marks cache_control reads or writes the cache.
import type { IncomingHttpHeaders } from "node:http";
import { promptTokenIds } from "./chat-template.js";
import type { PromptCache } from "./prompt-cache.js";
import { type SampledTurn, sampleTurn } from "./sample.js";
import { chooseReply, type EndpointScript, type RolloutContext } from "./script.js";

export type MessagesAnswer =
  | { status: number; text: string; contentType: string }
  | { events: string[] }
  | "hang";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** Anthropic's error body (its errors docs). */
export function messagesError(status: number, message: string): MessagesAnswer {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  return {
    status,
    text: JSON.stringify({ type: "error", error: { type, message } }),
    contentType: "application/json",
  };
}

interface Context {
  script: EndpointScript;
  apiKey: string | null;
  model: string;
  id: string;
  attempts: (key: string) => number;
  rollout: RolloutContext;
  cache: PromptCache | null;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

export function messagesAnswer(body: unknown, headers: IncomingHttpHeaders, c: Context): MessagesAnswer {
  if (c.apiKey && headers["x-api-key"] !== c.apiKey) return messagesError(401, "invalid x-api-key");
  if (typeof headers["anthropic-version"] !== "string")
    return messagesError(400, "anthropic-version: header is required");
  const problem = requestProblem(body);
  if (problem) return messagesError(400, problem);
  const request = body as Rec & { messages: Rec[] };
  const chosen = chooseReply(c.script, request.messages, c.attempts, c.rollout);
  if (!chosen)
    return messagesError(400, "no conversation in the policy script matches the opening user messages");
  const reply = chosen.reply;
  if ("hang" in reply) return "hang";
  if ("fail" in reply) return messagesError(reply.fail.status, "scripted failure");
  if ("malformed" in reply || "cut" in reply)
    return messagesError(500, "the script's malformed and cut replies are chat's only");
  const turn = sampleTurn(reply, chosen);
  const usage = usageOf(request, c.cache, turn);
  const message = {
    id: c.id,
    type: "message",
    role: "assistant",
    model: c.model,
    content: blocksOf(turn),
    stop_reason:
      turn.toolCalls.length > 0 ? "tool_use" : turn.finishReason === "length" ? "max_tokens" : "end_turn",
    stop_sequence: null,
    usage,
  };
  if (request.stream !== true)
    return { status: 200, text: JSON.stringify(message), contentType: "application/json" };
  return { events: eventsOf(message) };
}

/** What the API refuses with 400 that a careless conversion would send: the checks of its docs. */
function requestProblem(body: unknown): string | null {
  if (!isRec(body)) return "the body must be a JSON object";
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return "max_tokens: Field required (an integer >= 1)";
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "messages: at least one message is required";
  const uses = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    // Claude Code (2.1.x, with its betas) also sends system turns inside `messages`.
    if (!isRec(m) || (m.role !== "user" && m.role !== "assistant" && m.role !== "system"))
      return `messages.${i}.role: Input should be 'user', 'assistant' or 'system'`;
    const blocks = typeof m.content === "string" ? [] : m.content;
    if (!Array.isArray(blocks)) return `messages.${i}.content: Input should be a string or a list of blocks`;
    for (const b of blocks) {
      if (!isRec(b) || typeof b.type !== "string") return `messages.${i}.content: each block needs a type`;
      if (b.type === "tool_use") {
        if (m.role !== "assistant" || typeof b.id !== "string" || !isRec(b.input))
          return `messages.${i}: tool_use blocks are the assistant's, with an id and an object input`;
        uses.add(b.id);
      }
      if (b.type === "tool_result" && (m.role !== "user" || !uses.has(String(b.tool_use_id))))
        return `messages.${i}: unexpected tool_use_id found in tool_result blocks: ${String(b.tool_use_id)}`;
    }
  }
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system))
    return "system: Input should be a string or a list of text blocks";
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "tools: Input should be a list";
    for (const [i, t] of body.tools.entries())
      if (!isRec(t) || typeof t.name !== "string" || (t.type === undefined && !isRec(t.input_schema)))
        return `tools.${i}: a custom tool needs a name and an input_schema`;
  }
  return null;
}

function blocksOf(turn: SampledTurn): Rec[] {
  const blocks: Rec[] = [];
  if (turn.reasoning) blocks.push({ type: "thinking", thinking: turn.reasoning, signature: "c2NyaXB0ZWQ=" });
  if (turn.content) blocks.push({ type: "text", text: turn.content });
  for (const call of turn.toolCalls)
    blocks.push({
      type: "tool_use",
      id: call.id.replace(/^call_/, "toolu_"),
      name: call.name,
      input: JSON.parse(call.arguments || "{}"),
    });
  return blocks;
}

/** Input tokens apart from cache reads and writes, as Anthropic counts them. */
function usageOf(request: Rec, cache: PromptCache | null, turn: SampledTurn): Rec {
  const text = JSON.stringify([request.system ?? null, request.tools ?? null, request.messages]);
  const prompt = promptTokenIds([{ role: "user", content: text }]);
  const marked = text.includes('"cache_control"');
  const read = cache && marked ? cache.hit(prompt) : 0;
  const write = marked ? prompt.length - read : 0;
  return {
    input_tokens: prompt.length - read - write,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: turn.completionIds.length,
  };
}

/** The documented event flow; each event's name is its data's type. */
function eventsOf(message: Rec & { content: Rec[]; usage: Rec }): string[] {
  const ev = (data: Rec) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  const { usage } = message;
  const out = [
    ev({
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
    ev({ type: "ping" }),
  ];
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      out.push(ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      for (const piece of pieces(String(block.text)))
        out.push(ev({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }));
    } else if (block.type === "thinking") {
      out.push(
        ev({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      out.push(
        ev({
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: block.thinking },
        }),
      );
      out.push(
        ev({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature },
        }),
      );
    } else {
      out.push(ev({ type: "content_block_start", index, content_block: { ...block, input: {} } }));
      for (const piece of pieces(JSON.stringify(block.input)))
        out.push(
          ev({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: piece },
          }),
        );
    }
    out.push(ev({ type: "content_block_stop", index }));
  });
  out.push(
    ev({
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  out.push(ev({ type: "message_stop" }));
  return out;
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 16) out.push(text.slice(i, i + 16));
  return out.length > 0 ? out : [""];
}
