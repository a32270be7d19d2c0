// Reading a rollout's calls and writing rows: shared by the plain and the grouped conversion.
import path from "node:path";
import { type Exchange, isSuccessful, readExchanges } from "../../jobs-dir/exchange.js";
import { TRAJECTORY } from "../../jobs-dir/index.js";
import { redactRow } from "../redact/rows.js";
import type { RolloutFacts } from "../rollouts/facts.js";
import type { RowFormat } from "../validate/validate.js";
import type { RowWriter } from "./row-writer.js";
import type { BaseRow, RowMode } from "./rows.js";
import type { ConvertStats } from "./stats.js";

export interface Produced {
  exchanges: Exchange[] | undefined;
  calls: number;
  okCalls: number;
}

export async function readCalls(r: RolloutFacts, stats: ConvertStats): Promise<Produced> {
  const display = path.join(r.displayDir, TRAJECTORY);
  const exchanges = await readExchanges(path.join(r.dir, TRAJECTORY), display);
  if (exchanges) await stats.sink.addSource(display);
  stats.exchangesSeen += exchanges?.length ?? 0;
  return { exchanges, calls: exchanges?.length ?? 0, okCalls: exchanges?.filter(isSuccessful).length ?? 0 };
}

export interface WriteContext {
  format: RowFormat;
  rowMode: RowMode;
  minReward: number | undefined;
  redact: boolean;
  stats: ConvertStats;
  writer: RowWriter;
}

export async function emitRow(
  ctx: WriteContext,
  row: BaseRow,
  toolCalls: number,
  signal: Record<string, unknown>,
): Promise<void> {
  await ctx.writer.write(redactRow({ ...row, ...signal }, ctx.redact, ctx.stats));
  ctx.stats.rowsWritten++;
  if (toolCalls > 0) ctx.stats.rowsWithToolCalls++;
}
