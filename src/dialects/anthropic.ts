// Anthropic Messages history -> chat messages: the one walk, used by the gateway (requests it sends
// upstream as chat) and by train (recorded requests as rows). Each assistant turn is one assistant
// message (text blocks joined, tool_use blocks as tool_calls); each tool_result block of a user turn
// is its own tool message, placed before the rest of that turn, right after the call it answers.
// What differs between the two is the style: how text, calls, results and user parts are written.
import { isObj, type Obj, type Turn } from "./turn.js";

export interface AnthropicStyle<Content, Call> {
  /** Joins the text blocks of an assistant turn. */
  textSeparator: string;
  /** An assistant turn without text: null in a chat request, "" in a row. */
  emptyText: Content;
  /** Thinking blocks ride along as `reasoning_content` (upstream may use them) or are dropped. */
  keepThinking: boolean;
  /** Block types that are calls (a row also keeps server_tool_use; the gateway cannot run those). */
  callTypes: readonly string[];
  /** A call block as a tool call; `turn` and `n` place it (for a fallback id). */
  toolCall(block: Obj, turn: string, n: number): Call;
  /** A tool_result block's content as the tool message's content. */
  toolResult(content: unknown): Content;
  /**
   * The rest of a user turn (its blocks other than tool_result) as one user message's content, or
   * undefined for none. `hadResults`: the turn gave tool messages.
   */
  userContent(rest: Obj[], hadResults: boolean): Content | undefined;
}

/** `turnKey(i)` names message i for fallback ids (default: its index). */
export function anthropicTurns<Content, Call>(
  messages: readonly unknown[],
  style: AnthropicStyle<Content, Call>,
  turnKey: (i: number) => string = String,
): Turn<Content, Call>[] {
  const out: Turn<Content, Call>[] = [];
  messages.forEach((m, i) => {
    if (!isObj(m)) return;
    if (m.role === "assistant") out.push(anthropicAssistant(m.content, style, turnKey(i)));
    else out.push(...userTurn(m.content, style));
  });
  return out;
}

/** One assistant turn (a request's history or a response's content) as one assistant message. */
export function anthropicAssistant<Content, Call>(
  content: unknown,
  style: AnthropicStyle<Content, Call>,
  turn: string,
): Turn<Content, Call> {
  if (typeof content === "string") return { role: "assistant", content: content as Content };
  const blocks = Array.isArray(content) ? content.filter(isObj) : [];
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: Call[] = [];
  for (const b of blocks) {
    if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
    else if (style.keepThinking && b.type === "thinking" && typeof b.thinking === "string")
      thinking.push(b.thinking);
    else if (style.callTypes.includes(String(b.type))) calls.push(style.toolCall(b, turn, calls.length));
  }
  const text = texts.join(style.textSeparator);
  const msg: Turn<Content, Call> = {
    role: "assistant",
    content: texts.length === 0 || text === "" ? style.emptyText : (text as Content),
  };
  if (thinking.length > 0) msg.reasoning_content = thinking.join("");
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

function userTurn<Content, Call>(
  content: unknown,
  style: AnthropicStyle<Content, Call>,
): Turn<Content, Call>[] {
  if (typeof content === "string") return [{ role: "user", content: content as Content }];
  const out: Turn<Content, Call>[] = [];
  const rest: Obj[] = [];
  for (const b of Array.isArray(content) ? content.filter(isObj) : []) {
    if (b.type === "tool_result") {
      out.push({
        role: "tool",
        tool_call_id: String(b.tool_use_id ?? ""),
        content: style.toolResult(b.content),
      });
    } else rest.push(b);
  }
  const user = style.userContent(rest, out.length > 0);
  if (user !== undefined) out.push({ role: "user", content: user });
  return out;
}
