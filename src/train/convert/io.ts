// Reading a rollout's calls and writing rows: shared by the plain and the grouped conversion.
import path from "node:path";
import { DataError } from "../../errors.js";
import {
  type CallFacts,
  callFactsOf,
  type Exchange,
  type Rollout,
  readRolloutExchanges,
  TRAJECTORY,
  trainingCalls,
} from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import { redactRow } from "../redact/rows.js";
import type { MessageWindow } from "../tokenizer/window.js";
import type { RowFormat } from "../validate/validate.js";
import type { ManifestSink } from "./manifest-writer.js";
import type { RowWriter } from "./row-writer.js";
import type { BaseRow, RowMode } from "./rows.js";
import type { ConvertStats } from "./stats.js";
import { type CallRoles, callRolesOf, subagentCounts } from "./subagents.js";

export interface Produced {
  exchanges: Exchange[] | undefined;
  calls: CallFacts;
  /** Whose each call is, when the rollout started Claude Code subagents (not for tokens rows). */
  roles: CallRoles | null;
}

export async function readCalls(
  r: Rollout,
  stats: ConvertStats,
  format?: RowFormat,
  includeNonAgentCalls = false,
): Promise<Produced> {
  const all = await readRolloutExchanges(r);
  if (all) await stats.sink.addSource(path.join(r.displayDir, TRAJECTORY));
  stats.exchangesSeen += all?.length ?? 0;
  // What another process in the sandbox posted is no part of the agent's conversation (exchange.ts).
  const own = all && trainingCalls(all, includeNonAgentCalls);
  if (own && own.nonAgent > 0) stats.skip("skipped_non_agent_calls", own.nonAgent);
  const exchanges = own?.calls;
  const roles = exchanges && format !== "tokens" ? await callRolesOf(exchanges, r) : null;
  const sub = subagentCounts(roles);
  stats.subagents.rollouts_with_subagents += sub.rollouts;
  stats.subagents.subagent_calls_seen += sub.spawns;
  stats.subagents.subagent_exchanges_seen += sub.exchanges;
  return {
    exchanges,
    calls: callFactsOf(all),
    roles,
  };
}

export interface WriteContext {
  format: RowFormat;
  rowMode: RowMode;
  minReward: number | undefined;
  /** Calls read as upstream's converter reads them (--upstream-rows). */
  upstreamRows?: boolean;
  redact: boolean;
  stats: ConvertStats;
  writer: RowWriter;
  /** --reward-vector and --subagent-rows. */
  rewardVector?: boolean;
  subagentRows?: boolean;
  /** Calls made by other processes than the agent become rows too (metadata.origin "other"). */
  includeNonAgentCalls?: boolean;
  /** --context-policy message-window (trl-sft). */
  window?: MessageWindow | null;
}

/** Every row a conversion writes goes through here: redaction, its counters, the row counts. */
export async function emitRow(
  ctx: Pick<WriteContext, "redact" | "stats" | "writer">,
  row: BaseRow | Record<string, unknown>,
  toolCalls: number,
  signal: Record<string, unknown>,
): Promise<void> {
  await ctx.writer.write(redactRow({ ...row, ...signal }, ctx.redact, ctx.stats));
  ctx.stats.rowsWritten++;
  if ((row as { agent_role?: string }).agent_role === "subagent") ctx.stats.subagents.subagent_rows_written++;
  if (toolCalls > 0) ctx.stats.rowsWithToolCalls++;
}

/**
 * Runs the writing of a conversion's rows and commits them only when it ends well and, with
 * --expected-rows, with exactly that many: otherwise neither the rows nor the manifest are written.
 */
export async function commitRows(
  out: { writer: RowWriter; sink: ManifestSink; stats: ConvertStats },
  expectedRows: number | undefined,
  write: () => Promise<void>,
): Promise<void> {
  try {
    await write();
    if (expectedRows !== undefined && out.stats.rowsWritten !== expectedRows) {
      throw new DataError(
        `${opt("expectedRows")} ${expectedRows}: the conversion gives ${out.stats.rowsWritten} row(s); nothing was written.`,
      );
    }
    await out.writer.commit();
  } catch (err) {
    await out.writer.abort();
    await out.sink.abort();
    throw err;
  }
}
