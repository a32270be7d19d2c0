// trl-sft rows from a JSONL file, as upstream re-writes them: a row that already is trl-sft (prompt,
// completion and tools) is kept whole with its tool-call arguments as objects and must pass the row
// checks; a results.jsonl row gives one row per `trajectory` step (the agent's own calls; the last
// one in rollout mode), from the step's prompt and completion and the row's tools.

import { withObjectArguments } from "../../../jobs-dir/conversation/common.js";
import { callPurposeOf, type Exchange } from "../../../jobs-dir/exchange.js";
import type { SkipReason } from "../../../schemas/train-manifest.js";
import { isRecord } from "../../../util/jsonl.js";
import type { TrlConversation } from "../../tokenizer/count.js";
import type { MessageWindow } from "../../tokenizer/window.js";
import { checkRow } from "../../validate/validate.js";
import { PRIMARY, type RowMode } from "../rows.js";
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

interface TrlContext {
  display: string;
  minReward: number | undefined;
  rowMode: RowMode;
  /** --context-policy message-window: each checked row within --max-length, as a rollout's are. */
  window?: MessageWindow | null;
}

const skipped = (out: TrlFromJsonl, k: SkipReason): TrlFromJsonl => {
  out.skips[k] = (out.skips[k] ?? 0) + 1;
  return out;
};

/** The row as it trains: within the message window when there is one; `at` names it in errors. */
const fitted = (ctx: TrlContext, r: Row, at: string): Row =>
  ctx.window ? ctx.window.fit(r as Row & TrlConversation, at) : r;

export function trlRowsOf(line: SourceLine, ctx: TrlContext): TrlFromJsonl {
  const { row, index } = line;
  const where = `${ctx.display} line ${index + 1}`;
  const out: TrlFromJsonl = { rows: [], skips: {}, exchanges: 0 };
  const reward = rowReward(row);
  const below = ctx.minReward !== undefined && (reward === null || reward < ctx.minReward);
  if ("prompt" in row && "completion" in row && "tools" in row) {
    if (below) return skipped(out, "skipped_reward");
    out.rows.push(nativeRow(line, ctx, where));
    return out;
  }
  if (resultsRowSkip(row) !== null) return skipped(out, "skipped_terminal_error");
  if (below) return skipped(out, "skipped_reward");
  const steps = row.trajectory;
  if (!Array.isArray(steps) || steps.length === 0) return skipped(out, "skipped_no_trajectory");
  const rawTools = "tools" in row ? row.tools : row.tool_defs;
  const tools = Array.isArray(rawTools) ? rawTools.filter(isRecord) : [];
  let candidates = agentSteps(steps, tools, out);
  if (ctx.rowMode === "rollout") candidates = candidates.slice(-1);
  for (const [i, step, purpose] of candidates) {
    if (!Array.isArray(step.prompt) || !Array.isArray(step.completion)) {
      skipped(out, "skipped_invalid");
      continue;
    }
    const built = stepRow(line, { step, i, purpose, tools, reward }, ctx.display);
    const check = checkRow(built, "trl-sft");
    if (check.problems.length > 0) {
      skipped(out, "skipped_invalid");
      continue;
    }
    out.rows.push({ row: fitted(ctx, built, `${where} trajectory step ${i}`), toolCalls: check.toolCalls });
  }
  return out;
}

/** A row that already is trl-sft: kept whole, and refused (not skipped) when it does not hold together. */
function nativeRow(line: SourceLine, ctx: TrlContext, where: string): { row: Row; toolCalls: number } {
  const native = {
    ...line.row,
    prompt: messagesOf(line.row.prompt),
    completion: messagesOf(line.row.completion),
    source_path: ctx.display,
    source_format: "trl-sft",
    source_index: line.index,
  };
  const check = checkRow(native, "trl-sft");
  if (check.problems.length > 0)
    throw new Error(`${where}: ${check.problems[0]}. Fix the row, or remove it.`);
  return { row: fitted(ctx, native, where), toolCalls: check.toolCalls };
}

/** The steps that are the agent's own calls, with their index and purpose; the rest counted as skipped. */
function agentSteps(steps: unknown[], tools: unknown[], out: TrlFromJsonl): Array<[number, Row, string]> {
  const candidates: Array<[number, Row, string]> = [];
  for (const [i, step] of steps.entries()) {
    if (!isRecord(step)) {
      skipped(out, "skipped_invalid");
      continue;
    }
    out.exchanges++;
    const purpose = stepPurpose(step, tools, i);
    if (PRIMARY.has(purpose)) candidates.push([i, step, purpose]);
    else skipped(out, "skipped_helper_calls");
  }
  return candidates;
}

/** One trajectory step of a results row as a trl-sft row, with where it came from. */
function stepRow(
  line: SourceLine,
  s: { step: Row; i: number; purpose: string; tools: unknown[]; reward: number | null },
  display: string,
): Row {
  const { row, index } = line;
  const extras = isRecord(s.step.extras) ? s.step.extras : {};
  return compact({
    prompt: messagesOf(s.step.prompt),
    completion: messagesOf(s.step.completion),
    tools: s.tools,
    reward: s.reward,
    task_id: rowText(row, "task_id", "task_name"),
    agent: rowText(row, "agent"),
    model: rowText(row, "model"),
    exchange_index: extras.exchange_index ?? s.i,
    call_purpose: s.purpose,
    source: "benchflow-results-jsonl",
    source_path: display,
    source_rollout_dir: infoOf(row).rollout_dir,
    source_format: "benchflow-results-jsonl",
    source_index: index,
  });
}
