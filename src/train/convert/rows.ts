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
import type { ChatMessage, PrimeSftRow, TokensRow, ToolDef, TrlSftRow } from "../../schemas/train-rows.js";
import { secretInTokenSource } from "../redact/rows.js";
import type { MessageWindow } from "../tokenizer/window.js";
import { tokenReport } from "../tokens/tokens.js";
import { checkRow, type RowFormat } from "../validate/validate.js";
import { type CallRoles, roleFields, rowCandidates } from "./subagents.js";
import { upstreamConversationOf } from "./upstream-rows.js";

export type RowMode = "rollout" | "exchange";
export type BaseRow =
  | Omit<PrimeSftRow, "outcome" | "outcome_category" | "attribution" | "attribution_reason" | "in_baseline">
  | Omit<TrlSftRow, "outcome" | "outcome_category" | "attribution" | "attribution_reason" | "in_baseline">
  | Omit<TokensRow, "outcome" | "outcome_category" | "attribution" | "attribution_reason" | "in_baseline">;

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
 * of rollouts and rows of a results.jsonl (convert/inputs/) are cut by this one rule.
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

export interface RowOptions {
  format: RowFormat;
  rowMode: RowMode;
  upstreamRows?: boolean;
  roles?: CallRoles | null;
  subagentRows?: boolean;
  window?: MessageWindow | null;
  redact?: boolean;
}

/** Counts a skipped call, or a repair made to a row written, under its manifest key. */
function bump(out: RowsOutcome, k: keyof RowsOutcome["skips"], n = 1): void {
  out.skips[k] = (out.skips[k] ?? 0) + n;
}

export function rowsOfRollout(exchanges: readonly Exchange[], facts: Rollout, opts: RowOptions): RowsOutcome {
  const out: RowsOutcome = { rows: [], skips: {} };
  if (exchanges.length === 0) {
    bump(out, "skipped_no_trajectory");
    return out;
  }
  if (opts.format === "tokens") return tokenRows(exchanges, facts, out, opts.redact ?? true);
  for (const ex of chatCandidates(exchanges, facts, opts, out)) addChatRow(ex, facts, opts, out);
  return out;
}

/**
 * The calls that may become chat rows: the successful ones (none: the rollout counts as a provider
 * error), less the helper calls a format does not train on.
 */
function chatCandidates(
  exchanges: readonly Exchange[],
  facts: Rollout,
  opts: RowOptions,
  out: RowsOutcome,
): Exchange[] {
  const ok = exchanges.filter(isSuccessful);
  if (ok.length === 0) {
    bump(out, "skipped_provider_error");
    bump(out, "skipped_exchanges_provider_error", exchanges.length);
    return [];
  }
  // A rollout with subagents: the parent's calls (and, with --subagent-rows, each subagent's).
  const picked = rowCandidates(ok, opts.roles ?? null, {
    rowMode: opts.rowMode,
    subagentRows: opts.subagentRows === true,
    primary: (ex) => opts.format !== "trl-sft" || PRIMARY.has(callPurposeOf(ex, facts.agent)),
  });
  if (picked.helpers > 0) bump(out, "skipped_helper_calls", picked.helpers);
  return picked.calls;
}

/** One call as a chat row in `out`, or, when it cannot be one, a skip counted with its reason. */
function addChatRow(ex: Exchange, facts: Rollout, opts: RowOptions, out: RowsOutcome): void {
  const conv = opts.upstreamRows ? upstreamConversationOf(ex) : conversationOf(ex);
  if (!conv.assistant) {
    bump(out, "skipped_no_assistant");
    return;
  }
  const repaired = repairToolOutputs([...conv.messages, conv.assistant]);
  if (repaired.messages.some((m) => (m.tool_calls?.length ?? 0) > 0) && conv.tools.length === 0) {
    bump(out, "skipped_missing_tool_defs");
    return;
  }
  const row = chatRow(ex, facts, opts, repaired.messages, conv.tools);
  const check = checkRow(row, opts.format);
  if (check.problems.length > 0) {
    bump(out, "skipped_invalid");
    return;
  }
  // --context-policy message-window: the row within --max-length tokens, or the conversion fails.
  const where = `${path.join(facts.displayDir, TRAJECTORY)} exchange ${ex.index}`;
  const fitted = opts.window && "prompt" in row ? opts.window.fit(row, where) : row;
  out.rows.push({ row: fitted, toolCalls: check.toolCalls });
  for (const [k, n] of Object.entries(repaired.repairs) as Array<[keyof Repairs, number]>)
    if (n > 0) bump(out, k, n);
}

/** A call's conversation as a prime-sft row (messages) or a trl-sft one (prompt and completion). */
function chatRow(
  ex: Exchange,
  facts: Rollout,
  opts: RowOptions,
  messages: ChatMessage[],
  tools: ToolDef[],
): BaseRow {
  // One rollout is one row in rollout mode, with the combined reward; an exchange row names its step.
  const step = opts.rowMode === "exchange" ? stepOf(ex) : null;
  const usage = facts.usage ?? undefined;
  const shared = {
    exchange_index: ex.index,
    ...(step ? { step } : {}),
  };
  // What the row came from: its rollout, the model the call asked for, and whose call it was.
  const fromRollout = {
    ...common(facts),
    model: requestModelOf(ex) ?? facts.model,
    ...roleFields(ex, opts.roles ?? null, opts.subagentRows === true),
  };
  if (opts.format === "prime-sft")
    return {
      messages: lastUserWindow(messages),
      tool_defs: tools,
      task_name: facts.task,
      source: "benchflow-llm-trajectory",
      ...shared,
      score: facts.reward,
      ...(usage ? { token_usage: usage } : {}),
      ...fromRollout,
    };
  const completion = messages[messages.length - 1] as ChatMessage;
  return {
    prompt: messages.slice(0, -1).map(withObjectArguments),
    completion: [withObjectArguments(completion)],
    tools,
    task_id: facts.task,
    ...shared,
    call_purpose: callPurposeOf(ex, facts.agent),
    source: "benchflow-llm-trajectory",
    ...(usage ? { token_usage: usage } : {}),
    ...fromRollout,
  };
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
      bump(out, "skipped_secret_in_tokens");
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
