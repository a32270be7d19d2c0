// Rows of one rollout in each format. Which calls become rows: the last successful call
// (`rollout` mode) or every successful call (`exchange` mode); trl-sft keeps only the agent's own
// calls. The group fields (outcome, in_baseline, advantage, group) are added by the caller.
import path from "node:path";
import { withObjectArguments } from "../../jobs-dir/conversation/common.js";
import {
  conversationOf,
  type Repairs,
  repairToolOutputs,
  requestModelOf,
} from "../../jobs-dir/conversation/index.js";
import {
  callPurposeOf,
  type Exchange,
  isSuccessful,
  policyVersions,
  stepOf,
} from "../../jobs-dir/exchange.js";
import { type Rollout, rewardsField, TRAJECTORY } from "../../jobs-dir/index.js";
import type { SkipReason } from "../../schemas/train-manifest.js";
import type { ChatMessage, PrimeSftRow, TokensRow, TrlSftRow } from "../../schemas/train-rows.js";
import { secretInTokenSource } from "../redact/rows.js";
import type { MessageWindow } from "../tokenizer/window.js";
import { tokenReport } from "../tokens/tokens.js";
import { checkRow, type RowFormat } from "../validate/validate.js";
import { type CallRoles, roleFields, rowCandidates } from "./subagents.js";
import { upstreamConversationOf } from "./upstream-rows.js";

export type RowMode = "rollout" | "exchange";
export type BaseRow =
  | Omit<PrimeSftRow, "outcome" | "outcome_category" | "in_baseline">
  | Omit<TrlSftRow, "outcome" | "outcome_category" | "in_baseline">
  | Omit<TokensRow, "outcome" | "outcome_category" | "in_baseline">;

export interface RowsOutcome {
  rows: Array<{ row: BaseRow; toolCalls: number }>;
  /** Calls skipped, by reason, and the repairs made to the rows written (repair.ts). */
  skips: Partial<Record<SkipReason | keyof Repairs, number>>;
  notTrainingGrade?: string;
  /** Tokens rows left out with redaction on: their source text holds a secret. */
  secretsInTokens?: Array<{ thread: number; reason: string }>;
}

/** The call purposes trl-sft trains on (the agent's own calls), for rollouts and results.jsonl steps. */
export const PRIMARY = new Set(["agent", "subagent"]);

/**
 * prime-sft keeps the last user message that has an assistant message after it, and everything
 * after it (upstream's last-user training window); a conversation without one is kept whole. Rows
 * of rollouts and rows of a results.jsonl (src/train/inputs) are cut by this one rule.
 */
export function lastUserWindow<M extends { role?: unknown }>(messages: M[]): M[] {
  for (let i = messages.length - 2; i >= 0; i--) {
    if (messages[i]?.role !== "user") continue;
    if (messages.slice(i + 1).some((m) => m.role === "assistant")) return messages.slice(i);
  }
  return messages;
}

function common(facts: Rollout) {
  return {
    rollout: facts.name,
    job: facts.job.id,
    reward: facts.reward,
    ...rewardsField(facts),
    agent: facts.agent,
    model: facts.model,
    source_path: path.join(facts.displayDir, TRAJECTORY),
    source_rollout_dir: facts.displayDir,
  };
}

export function rowsOfRollout(
  exchanges: readonly Exchange[],
  facts: Rollout,
  opts: {
    format: RowFormat;
    rowMode: RowMode;
    upstreamRows?: boolean;
    roles?: CallRoles | null;
    subagentRows?: boolean;
    window?: MessageWindow | null;
    redact?: boolean;
  },
): RowsOutcome {
  const out: RowsOutcome = { rows: [], skips: {} };
  const bump = (k: keyof RowsOutcome["skips"], n = 1) => {
    out.skips[k] = (out.skips[k] ?? 0) + n;
  };
  if (exchanges.length === 0) {
    bump("skipped_no_trajectory");
    return out;
  }
  if (opts.format === "tokens") return tokenRows(exchanges, facts, out, opts.redact ?? true);
  const ok = exchanges.filter(isSuccessful);
  if (ok.length === 0) {
    bump("skipped_provider_error");
    bump("skipped_exchanges_provider_error", exchanges.length);
    return out;
  }
  // A rollout with subagents: the parent's calls (and, with --subagent-rows, each subagent's).
  const picked = rowCandidates(ok, opts.roles ?? null, {
    rowMode: opts.rowMode,
    subagentRows: opts.subagentRows === true,
    primary: (ex) => opts.format !== "trl-sft" || PRIMARY.has(callPurposeOf(ex, facts.agent)),
  });
  if (picked.helpers > 0) bump("skipped_helper_calls", picked.helpers);
  const candidates = picked.calls;
  const usage = facts.usage ?? undefined;
  for (const ex of candidates) {
    // One rollout is one row in rollout mode, with the combined reward; an exchange row names its step.
    const step = opts.rowMode === "exchange" ? stepOf(ex) : null;
    const conv = opts.upstreamRows ? upstreamConversationOf(ex) : conversationOf(ex);
    if (!conv.assistant) {
      bump("skipped_no_assistant");
      continue;
    }
    const repaired = repairToolOutputs([...conv.messages, conv.assistant]);
    const messages = repaired.messages;
    const prompt = messages.slice(0, -1);
    const completion = messages[messages.length - 1] as ChatMessage;
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
            ...roleFields(ex, opts.roles ?? null, opts.subagentRows === true),
          }
        : {
            prompt: prompt.map(withObjectArguments),
            completion: [withObjectArguments(completion)],
            tools: conv.tools,
            task_id: facts.task,
            exchange_index: ex.index,
            ...(step ? { step } : {}),
            call_purpose: callPurposeOf(ex, facts.agent),
            source: "benchflow-llm-trajectory",
            ...(usage ? { token_usage: usage } : {}),
            ...common(facts),
            model: requestModelOf(ex) ?? facts.model,
            ...roleFields(ex, opts.roles ?? null, opts.subagentRows === true),
          };
    const check = checkRow(row, opts.format);
    if (check.problems.length > 0) {
      bump("skipped_invalid");
      continue;
    }
    // --context-policy message-window: the row within --max-length tokens, or the conversion fails.
    const where = `${path.join(facts.displayDir, TRAJECTORY)} exchange ${ex.index}`;
    const fitted = opts.window && "prompt" in row ? opts.window.fit(row, where) : row;
    out.rows.push({ row: fitted, toolCalls: check.toolCalls });
    for (const [k, n] of Object.entries(repaired.repairs) as Array<[keyof Repairs, number]>)
      if (n > 0) bump(k, n);
  }
  return out;
}

function tokenRows(
  exchanges: readonly Exchange[],
  facts: Rollout,
  out: RowsOutcome,
  redact: boolean,
): RowsOutcome {
  const report = tokenReport(exchanges);
  if (!report.sequences) {
    out.skips.skipped_not_training_grade = 1;
    out.notTrainingGrade = report.summary.reason ?? "not training-grade";
    return out;
  }
  const versions = policyVersions(exchanges);
  for (const seq of report.sequences) {
    // Ids encode the text, so a row whose text holds a secret cannot be redacted: it is left out.
    const secret = redact
      ? secretInTokenSource(exchanges.filter((ex) => seq.calls.includes(ex.index)))
      : null;
    if (secret) {
      out.skips.skipped_secret_in_tokens = (out.skips.skipped_secret_in_tokens ?? 0) + 1;
      out.secretsInTokens = [...(out.secretsInTokens ?? []), { thread: seq.thread, reason: secret }];
      continue;
    }
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
