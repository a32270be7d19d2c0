// prime-sft rows from a results.jsonl or an existing trainer JSONL, as upstream re-writes them: each
// row's messages (`messages`, else `prompt` + `completion`) get normalised tool calls, legacy tool-call
// ids repaired, and must pass the row checks (a row that fails stops the conversion: the file is
// bad, not one rollout); then results rows that are not training data, and rows under --min-reward,
// are left out, and the rest are written compact (a results row windowed from its last user turn).
import { isRecord } from "../../util/jsonl.js";
import { checkRow } from "../validate/validate.js";
import {
  compact,
  isResultsRow,
  type Row,
  resultsRowSkip,
  rowReward,
  rowText,
  type SourceLine,
} from "./source-rows.js";

export interface Repairs {
  tool_call_ids_rewritten: number;
  tool_messages_merged: number;
}

type Message = Record<string, unknown>;

/** Arguments as the JSON string of an object; anything else is wrapped so a trainer can still read it. */
function argumentsText(args: unknown): string {
  if (typeof args === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return JSON.stringify({ _malformed_json_arguments: args });
    }
    return isRecord(parsed) ? args : JSON.stringify({ _non_object_json_arguments: parsed });
  }
  if (isRecord(args)) return JSON.stringify(args);
  if (args === undefined || args === null) return "{}";
  return JSON.stringify({ _non_object_arguments: args });
}

function normalToolCall(call: Message, index: number): Message {
  const fn = isRecord(call.function) ? call.function : {};
  const args = "arguments" in fn ? fn.arguments : (call.arguments ?? {});
  const id = call.id || call.tool_call_id || `call_${String(index).padStart(6, "0")}`;
  return {
    id: String(id),
    type: "function",
    function: { name: String(fn.name || call.name || "tool"), arguments: argumentsText(args) },
  };
}

function withNormalToolCalls(m: unknown): unknown {
  if (!isRecord(m) || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) return m;
  return { ...m, tool_calls: m.tool_calls.filter(isRecord).map(normalToolCall) };
}

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof p === "string" ? p : isRecord(p) ? (p.text ?? p.content) : undefined))
      .filter((t): t is string => typeof t === "string")
      .join("\n");
  return content === undefined || content === null ? "" : String(content);
};

/**
 * Older results.jsonl files kept the provider's ids on assistant tool calls (`fc_*`) while the tool
 * messages after them carry the ids the runtime sent back (`call_*`). Pairing by order: a tool
 * message whose id no pending call has takes the oldest pending call, which gets its id. Two tool
 * messages in a row for one id are one output, merged. An orphan with no pending call still fails.
 */
export function repairToolCallIds(messages: readonly unknown[], repairs: Repairs): unknown[] {
  const out: unknown[] = [];
  const pending: Message[] = [];
  for (const raw of messages) {
    const m = isRecord(raw) ? structuredClone(raw) : raw;
    if (!isRecord(m)) {
      out.push(m);
      continue;
    }
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) pending.push(...m.tool_calls.filter(isRecord));
    if (m.role === "tool") {
      const prev = out[out.length - 1];
      if (isRecord(prev) && prev.role === "tool" && prev.tool_call_id === m.tool_call_id) {
        prev.content = [textOf(prev.content), textOf(m.content)].filter((t) => t !== "").join("\n");
        repairs.tool_messages_merged++;
        continue;
      }
      const at = pending.findIndex((c) => c.id === m.tool_call_id);
      if (at !== -1) pending.splice(at, 1);
      else if (pending.length > 0 && m.tool_call_id) {
        const call = pending.shift() as Message;
        if (call.id !== m.tool_call_id) {
          call.id = m.tool_call_id;
          repairs.tool_call_ids_rewritten++;
        }
      }
    }
    out.push(m);
  }
  return out;
}

/** prime-sft keeps the last user message that has an assistant message after it, and what follows. */
function lastUserWindow(messages: Message[]): Message[] {
  for (let i = messages.length - 2; i >= 0; i--) {
    if (messages[i]?.role !== "user") continue;
    const rest = messages.slice(i + 1);
    if (rest.some((m) => m.role === "assistant")) return messages.slice(i);
  }
  return messages;
}

function problemOf(row: Row, messages: unknown[], where: string): void {
  const check = checkRow({ messages, tool_defs: row.tool_defs ?? row.tools }, "prime-sft");
  if (check.problems.length > 0)
    throw new Error(`${where}: ${check.problems[0]}. Fix the row, or remove it.`);
}

export interface PrimeFromJsonl {
  /** null: left out, with the manifest reason. */
  row: Row | null;
  skip?: "skipped_terminal_error" | "skipped_reward";
  toolCalls: number;
}

/** One source line as a prime-sft row (throws when the row is not a valid conversation). */
export function primeRowOf(
  line: SourceLine,
  ctx: { display: string; minReward: number | undefined; repairs: Repairs },
): PrimeFromJsonl {
  const { row } = line;
  const where = `${ctx.display} line ${line.index + 1}`;
  const segments = Array.isArray(row.messages) && row.messages.length > 0 ? "messages" : "prompt+completion";
  let messages: unknown[];
  if (segments === "messages") messages = row.messages as unknown[];
  else if (Array.isArray(row.prompt) && Array.isArray(row.completion))
    messages = [...row.prompt, ...row.completion];
  else
    throw new Error(
      `${where}: expected a non-empty "messages" list, or "prompt" and "completion" lists. A rollout folder or a jobs folder converts too.`,
    );
  messages = repairToolCallIds(messages.map(withNormalToolCalls), ctx.repairs);
  problemOf(row, messages, where);
  if (resultsRowSkip(row) !== null) return { row: null, skip: "skipped_terminal_error", toolCalls: 0 };
  const reward = rowReward(row);
  if (ctx.minReward !== undefined && (reward === null || reward < ctx.minReward))
    return { row: null, skip: "skipped_reward", toolCalls: 0 };
  let kept = messages.filter(isRecord);
  // A results row holds the whole conversation: train on its last turn, as a rollout's row does.
  if (isResultsRow(row)) kept = lastUserWindow(kept);
  const taskId = rowText(row, "task_id", "task_name");
  const info = isRecord(row.info) ? row.info : {};
  const out = compact({
    messages: kept,
    tool_defs: row.tool_defs ?? row.tools,
    reward,
    task_id: taskId,
    task_name: rowText(row, "task_name") ?? taskId,
    model: rowText(row, "model"),
    agent: rowText(row, "agent"),
    source_example_id: Number.isInteger(row.example_id) ? row.example_id : undefined,
    source_rollout_dir: typeof info.rollout_dir === "string" ? info.rollout_dir : undefined,
    chat_template_kwargs: row.chat_template_kwargs,
    source_path: ctx.display,
    source_index: line.index,
    source_format: "benchflow-results-jsonl",
  });
  const check = checkRow(out, "prime-sft");
  if (check.problems.length > 0)
    throw new Error(`${where}: ${check.problems[0]}. Fix the row, or remove it.`);
  return { row: out, toolCalls: check.toolCalls };
}
