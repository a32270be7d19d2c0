// Tool outputs put right before a row is checked, as upstream's converter does (its
// _align_legacy_tool_call_ids), for recorded calls and for rows read back from a trainer file:
// - two tool messages in a row for the same call id are one output in fragments (OpenHands sends a
//   long output as several): they are merged, their texts joined by a newline;
// - a tool message whose id no open call has, while calls are open, answers the oldest open call:
//   older BenchFlow rows kept the provider's call id (fc_...) on the call and the runtime's (call_...)
//   on its output, so the call takes the output's id. A tool output with no open call is left for
//   validation to reject.
import type { ChatMessage, ToolCall } from "../../schemas/train-rows.js";
import { isRecord } from "../../util/jsonl.js";

export interface Repairs {
  /** Tool-call ids rewritten to the id of the output that answers them. */
  tool_call_ids_rewritten: number;
  /** Tool messages merged into the one before them (same call id). */
  tool_messages_merged: number;
}

/** A fragment's text, as upstream joins fragments: each part's `text` (else `content`) string. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((p) => (typeof p === "string" ? p : isRecord(p) ? (p.text ?? p.content) : undefined))
    .filter((t): t is string => typeof t === "string")
    .join("\n");
}

/** The messages repaired (copies; the input is untouched) and what was done to them. */
export function repairToolOutputs(messages: readonly ChatMessage[]): {
  messages: ChatMessage[];
  repairs: Repairs;
} {
  const repairs: Repairs = { tool_call_ids_rewritten: 0, tool_messages_merged: 0 };
  const out: ChatMessage[] = [];
  // Calls not yet answered, oldest first (an unanswered call stays open, as upstream keeps it).
  const open: ToolCall[] = [];
  for (const original of messages) {
    const m: ChatMessage = Array.isArray(original.tool_calls)
      ? { ...original, tool_calls: original.tool_calls.map((c) => ({ ...c })) }
      : { ...original };
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) open.push(...m.tool_calls);
    if (m.role === "tool") {
      const prev = out[out.length - 1];
      if (prev?.role === "tool" && prev.tool_call_id === m.tool_call_id) {
        prev.content = [textOf(prev.content), textOf(m.content)].filter((t) => t !== "").join("\n");
        repairs.tool_messages_merged++;
        continue;
      }
      const match = open.findIndex((c) => c.id === m.tool_call_id);
      if (match >= 0) open.splice(match, 1);
      else if (open.length > 0 && m.tool_call_id) {
        const call = open.shift() as ToolCall;
        call.id = m.tool_call_id;
        repairs.tool_call_ids_rewritten++;
      }
    }
    out.push(m);
  }
  return { messages: out, repairs };
}
