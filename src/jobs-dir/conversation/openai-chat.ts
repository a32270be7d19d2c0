// OpenAI chat completions: already the row shape; only content, tool calls and tool defs are tidied.
// Some agents (OpenHands through LiteLLM) send Responses items inside a chat `messages` list
// ({type: "function_call"}, {type: "function_call_output"}, {type: "message", content: [input_text]});
// a run of such items is read as Responses input, in place, as upstream's converter reads them.
import type { ChatMessage, ToolDef } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";
import {
  arrayOf,
  type Conversation,
  cleanMessage,
  contentOf,
  type Obj,
  toolCall,
  toolDef,
} from "./common.js";
import { itemsToMessages } from "./openai-responses.js";

/** Item types of the Responses API that may appear among chat messages. */
const RESPONSES_ITEMS = new Set([
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "reasoning",
]);

export function chatMessage(m: Obj, where: string): ChatMessage {
  const msg: Obj = { ...m, content: m.content == null ? "" : contentOf(m.content) };
  // The legacy functions API's one call per message is a tool call like any other.
  const calls =
    Array.isArray(m.tool_calls) && m.tool_calls.length > 0
      ? m.tool_calls
      : isRecord(m.function_call)
        ? [m.function_call]
        : [];
  if (calls.length > 0) {
    msg.tool_calls = calls.map((c, i) => {
      const call = isRecord(c) ? c : {};
      const fn = isRecord(call.function) ? call.function : call;
      return toolCall(call.id ?? call.tool_call_id, fn.name, fn.arguments, `call_${where}_${i}`);
    });
  } else {
    delete msg.tool_calls;
  }
  return cleanMessage(msg);
}

/** A chat history that may hold Responses items: each run of items becomes chat messages in place. */
function chatHistory(items: unknown[], where: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  let run: unknown[] = [];
  let runStart = 0;
  const flush = () => {
    if (run.length > 0) out.push(...itemsToMessages(run, `${where}_${runStart}`));
    run = [];
  };
  items.forEach((m, i) => {
    if (!isRecord(m)) return;
    if (typeof m.type === "string" && RESPONSES_ITEMS.has(m.type)) {
      if (run.length === 0) runStart = i;
      run.push(m);
      return;
    }
    flush();
    out.push(chatMessage(m, `${where}_${i}`));
  });
  flush();
  return out;
}

export function chatTools(tools: unknown): ToolDef[] {
  const out: ToolDef[] = [];
  for (const t of arrayOf(tools)) {
    if (!isRecord(t)) continue;
    const fn = isRecord(t.function) ? t.function : t;
    const def = toolDef(fn.name, fn.description, fn.parameters);
    if (def) out.push(def);
  }
  return out;
}

export function fromOpenAIChat(req: Obj, exchangeIndex: number): Omit<Conversation, "assistant"> {
  return {
    messages: chatHistory(arrayOf(req.messages), String(exchangeIndex)),
    tools: chatTools(req.tools ?? req.tool_defs ?? req.functions),
  };
}

/** A chat response's first choice (or a bare `message`, as some proxies record it) as the reply. */
export function chatReply(res: Obj, where: string): ChatMessage | null {
  const choice = arrayOf(res.choices)[0];
  const reply = isRecord(choice) && isRecord(choice.message) ? choice.message : res.message;
  return isRecord(reply) ? chatMessage({ ...reply, role: "assistant" }, where) : null;
}
