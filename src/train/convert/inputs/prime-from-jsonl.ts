// prime-sft rows from a results.jsonl or an existing trainer JSONL, as upstream re-writes them: each
// row's messages (`messages`, else `prompt` + `completion`) get normalised tool calls, tool outputs
// repaired as a rollout's are (dialects/repair.ts), and must pass the row checks (a row that fails
// stops the conversion: the file is bad, not one rollout); then results rows that are not training
// data, and rows under --min-reward, are left out, and the rest are written compact (a results row
// windowed from its last user turn, by the rule a rollout's row is cut by).

import { argumentsOf } from "../../../jobs-dir/conversation/common.js";
import { type Repairs, repairToolOutputs } from "../../../jobs-dir/conversation/index.js";
import type { ChatMessage } from "../../../schemas/train-rows.js";
import { isRecord } from "../../../util/jsonl.js";
import { checkRow } from "../../validate/validate.js";
import { lastUserWindow } from "../rows.js";
import {
  compact,
  isResultsRow,
  type Row,
  resultsRowSkip,
  rowReward,
  rowText,
  type SourceLine,
} from "./source-rows.js";

type Message = Record<string, unknown>;

function normalToolCall(call: Message, index: number): Message {
  const fn = isRecord(call.function) ? call.function : {};
  const args = "arguments" in fn ? fn.arguments : (call.arguments ?? {});
  const id = call.id || call.tool_call_id || `call_${String(index).padStart(6, "0")}`;
  return {
    id: String(id),
    type: "function",
    function: { name: String(fn.name || call.name || "tool"), arguments: argumentsOf(args) },
  };
}

function withNormalToolCalls(m: unknown): unknown {
  if (!isRecord(m) || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) return m;
  return { ...m, tool_calls: m.tool_calls.filter(isRecord).map(normalToolCall) };
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
  /** What repairToolOutputs did to the line's messages (counted whether or not it gave a row). */
  repairs: Repairs;
}

/** One source line as a prime-sft row (throws when the row is not a valid conversation). */
export function primeRowOf(
  line: SourceLine,
  ctx: { display: string; minReward: number | undefined },
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
  messages = messages.map(withNormalToolCalls);
  // A line with a message that is not an object is not repaired: the row checks reject it next.
  const repaired = messages.every(isRecord)
    ? repairToolOutputs(messages as ChatMessage[])
    : { messages, repairs: { tool_call_ids_rewritten: 0, tool_messages_merged: 0 } };
  messages = repaired.messages;
  const { repairs } = repaired;
  problemOf(row, messages, where);
  if (resultsRowSkip(row) !== null)
    return { row: null, skip: "skipped_terminal_error", toolCalls: 0, repairs };
  const reward = rowReward(row);
  if (ctx.minReward !== undefined && (reward === null || reward < ctx.minReward))
    return { row: null, skip: "skipped_reward", toolCalls: 0, repairs };
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
  return { row: out, toolCalls: check.toolCalls, repairs };
}
