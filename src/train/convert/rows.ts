// Rows of one rollout in each format. Which calls become rows: the last successful call
// (`rollout` mode) or every successful call (`exchange` mode); trl-sft keeps only the agent's own
// calls. The group fields (outcome, in_baseline, advantage, group) are added by the caller.
import path from "node:path";
import {
  callPurposeOf,
  type Exchange,
  isSuccessful,
  policyVersions,
  stepOf,
} from "../../jobs-dir/exchange.js";
import { TRAJECTORY } from "../../jobs-dir/index.js";
import type { SkipReason } from "../../schemas/train-manifest.js";
import type { ChatMessage, PrimeSftRow, TokensRow, TrlSftRow } from "../../schemas/train-rows.js";
import { conversationOf, requestModelOf } from "../dialects/index.js";
import type { RolloutFacts } from "../rollouts/facts.js";
import { tokenReport } from "../tokens/tokens.js";
import { checkRow, type RowFormat } from "../validate/validate.js";

export type RowMode = "rollout" | "exchange";
export type BaseRow =
  | Omit<PrimeSftRow, "outcome" | "outcome_category" | "in_baseline">
  | Omit<TrlSftRow, "outcome" | "outcome_category" | "in_baseline">
  | Omit<TokensRow, "outcome" | "outcome_category" | "in_baseline">;

export interface RowsOutcome {
  rows: Array<{ row: BaseRow; toolCalls: number }>;
  skips: Partial<Record<SkipReason, number>>;
  notTrainingGrade?: string;
}

const PRIMARY = new Set(["agent", "subagent"]);

/** prime-sft keeps the last user message and everything after it. */
function lastUserWindow(messages: ChatMessage[]): ChatMessage[] {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return messages.slice(i);
  return messages;
}

/** trl-sft wants arguments as objects (chat templates render them). */
function withObjectArguments(m: ChatMessage): ChatMessage {
  if (!m.tool_calls) return m;
  const tool_calls = m.tool_calls.map((c) => {
    const args = c.function.arguments;
    return typeof args === "string" ? { ...c, function: { ...c.function, arguments: JSON.parse(args) } } : c;
  });
  return { ...m, tool_calls };
}

function common(facts: RolloutFacts) {
  return {
    rollout: facts.name,
    job: facts.job.id,
    reward: facts.reward,
    ...(facts.rewards ? { rewards: facts.rewards } : {}),
    agent: facts.agent,
    model: facts.model,
    source_path: path.join(facts.displayDir, TRAJECTORY),
    source_rollout_dir: facts.displayDir,
  };
}

export function rowsOfRollout(
  exchanges: readonly Exchange[],
  facts: RolloutFacts,
  opts: { format: RowFormat; rowMode: RowMode },
): RowsOutcome {
  const out: RowsOutcome = { rows: [], skips: {} };
  const bump = (k: keyof RowsOutcome["skips"], n = 1) => {
    out.skips[k] = (out.skips[k] ?? 0) + n;
  };
  if (exchanges.length === 0) {
    bump("skipped_no_trajectory");
    return out;
  }
  if (opts.format === "tokens") return tokenRows(exchanges, facts, out);
  const ok = exchanges.filter(isSuccessful);
  if (ok.length === 0) {
    bump("skipped_provider_error");
    bump("skipped_exchanges_provider_error", exchanges.length);
    return out;
  }
  let candidates = ok;
  if (opts.format === "trl-sft") {
    candidates = ok.filter((ex) => PRIMARY.has(callPurposeOf(ex)));
    if (candidates.length < ok.length) bump("skipped_helper_calls", ok.length - candidates.length);
  }
  if (opts.rowMode === "rollout") candidates = candidates.slice(-1);
  const usage = facts.result?.usage;
  for (const ex of candidates) {
    // One rollout is one row in rollout mode, with the combined reward; an exchange row names its step.
    const step = opts.rowMode === "exchange" ? stepOf(ex) : null;
    const conv = conversationOf(ex);
    if (!conv.assistant) {
      bump("skipped_no_assistant");
      continue;
    }
    const messages = [...conv.messages, conv.assistant];
    if (messages.some((m) => (m.tool_calls?.length ?? 0) > 0) && conv.tools.length === 0) {
      bump("skipped_missing_tool_defs");
      continue;
    }
    const row: BaseRow =
      opts.format === "prime-sft"
        ? {
            messages: lastUserWindow(messages),
            tool_defs: conv.tools,
            task_name: facts.task,
            source: "benchflow-llm-trajectory",
            exchange_index: ex.index,
            ...(step ? { step } : {}),
            score: facts.reward,
            ...(usage ? { token_usage: usage } : {}),
            ...common(facts),
            model: requestModelOf(ex) ?? facts.model,
          }
        : {
            prompt: conv.messages.map(withObjectArguments),
            completion: [withObjectArguments(conv.assistant)],
            tools: conv.tools,
            task_id: facts.task,
            exchange_index: ex.index,
            ...(step ? { step } : {}),
            call_purpose: callPurposeOf(ex),
            source: "benchflow-llm-trajectory",
            ...(usage ? { token_usage: usage } : {}),
            ...common(facts),
            model: requestModelOf(ex) ?? facts.model,
          };
    const check = checkRow(row, opts.format);
    if (check.problems.length > 0) {
      bump("skipped_invalid");
      continue;
    }
    out.rows.push({ row, toolCalls: check.toolCalls });
  }
  return out;
}

function tokenRows(exchanges: readonly Exchange[], facts: RolloutFacts, out: RowsOutcome): RowsOutcome {
  const report = tokenReport(exchanges);
  if (!report.sequences) {
    out.skips.skipped_not_training_grade = 1;
    out.notTrainingGrade = report.summary.reason ?? "not training-grade";
    return out;
  }
  const versions = policyVersions(exchanges);
  for (const seq of report.sequences) {
    const row: BaseRow = {
      ...seq,
      task_name: facts.task,
      source: "benchflow-token-capture",
      ...(versions.length > 0 ? { policy_versions: versions } : {}),
      ...common(facts),
    };
    out.rows.push({ row, toolCalls: 0 });
  }
  return out;
}
