// OpenAI Responses input items -> chat messages: the one walk, used by the gateway (requests it sends
// upstream as chat) and by train (recorded requests and responses as rows). Messages stay messages;
// a function_call or custom_tool_call joins the assistant turn just before it (consecutive calls make
// one turn); each *_output item is a tool message. What differs is the style below.
import { namespacedName } from "./tools.js";
import { isObj, type Obj, type Turn } from "./turn.js";

export interface ResponsesStyle<Content, Call> {
  /** A call's assistant turn when none is open: null in a chat request, "" in a row. */
  emptyText: Content;
  /**
   * Reasoning items ride on the next assistant turn as `reasoning_content` (the gateway: upstream may
   * use them) or are dropped (rows).
   */
  keepReasoning: boolean;
  /** A bare string item is a user message (rows); the gateway skips anything not an object. */
  stringItems: boolean;
  /** An item without `type` is a message only when it has a string role (the gateway), or always. */
  untypedNeedsRole: boolean;
  /** `developer` becomes `system` here (the gateway); rows normalise roles later, all at once. */
  developerAsSystem: boolean;
  /** A message item's content as the message's. */
  messageContent(role: string, content: unknown): Content;
  /** A function_call or custom_tool_call item as a tool call; `index` is the item's (a fallback id). */
  toolCall(item: Obj, index: number): Call;
  /** An output item's `output` as the tool message's content. */
  toolResult(output: unknown): Content;
}

const CALLS = ["function_call", "custom_tool_call"];
const OUTPUTS = ["function_call_output", "custom_tool_call_output"];

export function responsesTurns<Content, Call>(
  items: readonly unknown[],
  style: ResponsesStyle<Content, Call>,
): Turn<Content, Call>[] {
  const out: Turn<Content, Call>[] = [];
  let reasoning = "";
  const assistantTurn = (): Turn<Content, Call> => {
    const last = out[out.length - 1];
    if (last && last.role === "assistant" && reasoning === "") return last;
    const turn: Turn<Content, Call> = { role: "assistant", content: style.emptyText };
    if (reasoning !== "") turn.reasoning_content = reasoning;
    reasoning = "";
    out.push(turn);
    return turn;
  };
  items.forEach((item, i) => {
    if (typeof item === "string" && style.stringItems) {
      out.push({ role: "user", content: item as Content });
      return;
    }
    if (!isObj(item)) return;
    const type = style.untypedNeedsRole
      ? (item.type ?? (typeof item.role === "string" ? "message" : null))
      : item.type === undefined
        ? "message"
        : item.type;
    if (type === "message") {
      const raw = String(item.role ?? "user");
      const role = style.developerAsSystem && raw === "developer" ? "system" : raw;
      const turn: Turn<Content, Call> = { role, content: style.messageContent(role, item.content) };
      if (role === "assistant" && reasoning !== "") {
        turn.reasoning_content = reasoning;
        reasoning = "";
      }
      out.push(turn);
    } else if (CALLS.includes(String(type))) {
      const turn = assistantTurn();
      // A call to a namespaced tool names it as the request's tool list does (flat).
      const call =
        typeof item.namespace === "string" && item.namespace !== ""
          ? { ...item, name: namespacedName(item.namespace, String(item.name ?? "")) }
          : item;
      turn.tool_calls = [...(turn.tool_calls ?? []), style.toolCall(call, i)];
    } else if (OUTPUTS.includes(String(type))) {
      out.push({
        role: "tool",
        tool_call_id: String(item.call_id ?? ""),
        content: style.toolResult(item.output),
      });
    } else if (type === "reasoning" && style.keepReasoning) {
      reasoning += reasoningText(item);
    }
  });
  return out;
}

/** A reasoning item's text: its content parts, else its summary parts. */
function reasoningText(item: Obj): string {
  const parts = Array.isArray(item.content) && item.content.length > 0 ? item.content : item.summary;
  return Array.isArray(parts)
    ? parts.map((p) => (isObj(p) && typeof p.text === "string" ? p.text : "")).join("")
    : "";
}
