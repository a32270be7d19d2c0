// trl-sft rows from a JSONL file, as upstream re-writes them: a row that already is trl-sft (prompt,
// completion and tools) is kept whole with its tool-call arguments as objects and must pass the row
// checks; a results.jsonl row gives one row per `trajectory` step (the agent's own calls; the last
// one in rollout mode), from the step's prompt and completion and the row's tools.

import { withObjectArguments } from "../../jobs-dir/conversation/common.js";
import { callPurposeOf, type Exchange } from "../../jobs-dir/exchange.js";
import type { SkipReason } from "../../schemas/train-manifest.js";
import { isRecord } from "../../util/jsonl.js";
import { PRIMARY, type RowMode } from "../convert/rows.js";
import type { TrlConversation } from "../tokenizer/count.js";
import type { MessageWindow } from "../tokenizer/window.js";
import { checkRow } from "../validate/validate.js";
import {
  compact,
  infoOf,
  type Row,
  resultsRowSkip,
  rowReward,
  rowText,
  type SourceLine,
} from "./source-rows.js";

const messagesOf = (v: unknown) => (Array.isArray(v) ? v.filter(isRecord).map(withObjectArguments) : []);

/** A step's purpose: the one its extras recorded, else what the call itself says (its prompt and tools). */
function stepPurpose(step: Row, tools: unknown[], index: number): string {
  const extras = isRecord(step.extras) ? step.extras : {};
  const call: Exchange = {
    index,
    request: { body: { messages: step.prompt, tools } },
    response: {},
    metadata: typeof extras.call_purpose === "string" ? { call_purpose: extras.call_purpose } : {},
  };
  return callPurposeOf(call);
}

export interface TrlFromJsonl {
  rows: Array<{ row: Row; toolCalls: number }>;
  skips: Partial<Record<SkipReason, number>>;
  exchanges: number;
}

export function trlRowsOf(
  line: SourceLine,
  ctx: {
    display: string;
    minReward: number | undefined;
    rowMode: RowMode;
    /** --context-policy message-window: each checked row within --max-length, as a rollout's are. */
    window?: MessageWindow | null;
  },
): TrlFromJsonl {
  const { row, index } = line;
  const where = `${ctx.display} line ${index + 1}`;
  const out: TrlFromJsonl = { rows: [], skips: {}, exchanges: 0 };
  const fitted = (r: Row, at = where): Row =>
    ctx.window ? ctx.window.fit(r as Row & TrlConversation, at) : r;
  const bump = (k: SkipReason): TrlFromJsonl => {
    out.skips[k] = (out.skips[k] ?? 0) + 1;
    return out;
  };
  const reward = rowReward(row);
  const below = ctx.minReward !== undefined && (reward === null || reward < ctx.minReward);
  if ("prompt" in row && "completion" in row && "tools" in row) {
    if (below) return bump("skipped_reward");
    const native = {
      ...row,
      prompt: messagesOf(row.prompt),
      completion: messagesOf(row.completion),
      source_path: ctx.display,
      source_format: "trl-sft",
      source_index: index,
    };
    const check = checkRow(native, "trl-sft");
    if (check.problems.length > 0)
      throw new Error(`${where}: ${check.problems[0]}. Fix the row, or remove it.`);
    out.rows.push({ row: fitted(native), toolCalls: check.toolCalls });
    return out;
  }
  if (resultsRowSkip(row) !== null) return bump("skipped_terminal_error");
  if (below) return bump("skipped_reward");
  const steps = row.trajectory;
  if (!Array.isArray(steps) || steps.length === 0) return bump("skipped_no_trajectory");
  const rawTools = "tools" in row ? row.tools : row.tool_defs;
  const tools = Array.isArray(rawTools) ? rawTools.filter(isRecord) : [];
  const agent = rowText(row, "agent");
  let candidates: Array<[number, Row, string]> = [];
  for (const [i, step] of steps.entries()) {
    if (!isRecord(step)) {
      bump("skipped_invalid");
      continue;
    }
    out.exchanges++;
    const purpose = stepPurpose(step, tools, i);
    if (PRIMARY.has(purpose)) candidates.push([i, step, purpose]);
    else bump("skipped_helper_calls");
  }
  if (ctx.rowMode === "rollout") candidates = candidates.slice(-1);
  for (const [i, step, purpose] of candidates) {
    if (!Array.isArray(step.prompt) || !Array.isArray(step.completion)) {
      bump("skipped_invalid");
      continue;
    }
    const extras = isRecord(step.extras) ? step.extras : {};
    const built = compact({
      prompt: messagesOf(step.prompt),
      completion: messagesOf(step.completion),
      tools,
      reward,
      task_id: rowText(row, "task_id", "task_name"),
      agent,
      model: rowText(row, "model"),
      exchange_index: extras.exchange_index ?? i,
      call_purpose: purpose,
      source: "benchflow-results-jsonl",
      source_path: ctx.display,
      source_rollout_dir: infoOf(row).rollout_dir,
      source_format: "benchflow-results-jsonl",
      source_index: index,
    });
    const check = checkRow(built, "trl-sft");
    if (check.problems.length > 0) {
      bump("skipped_invalid");
      continue;
    }
    out.rows.push({ row: fitted(built, `${where} trajectory step ${i}`), toolCalls: check.toolCalls });
  }
  return out;
}
