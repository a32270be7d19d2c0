// `bench train convert FILE.jsonl`: a canonical results.jsonl or an existing trainer JSONL in place
// of a jobs folder, as upstream takes them (§5.2). There are no rollout folders behind such a file,
// so what needs them (groups and advantages, reward vectors, subagent rows, token rows, a canonical
// selection) is refused with the fix; the rows are re-checked, message-windowed, redacted and written
// atomically through the same pieces as a rollout's rows (emitRow), with the same manifest.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../../errors.js";
import { opt } from "../../../options.js";
import { messageWindowOf } from "../../tokenizer/options.js";
import { NO_WINDOW } from "../../tokenizer/window.js";
import type { RowFormat } from "../../validate/validate.js";
import { commitRows, emitRow } from "../io.js";
import { ManifestSink } from "../manifest-writer.js";
import { RowWriter } from "../row-writer.js";
import type { RowMode } from "../rows.js";
import { ConvertStats } from "../stats.js";
import type { ConvertOptions, ConvertResult } from "../types.js";
import { primeRowOf } from "./prime-from-jsonl.js";
import { readSourceLines } from "./source-rows.js";
import { trlRowsOf } from "./trl-from-jsonl.js";

/** A file whose name ends in .jsonl: upstream's test for a JSONL source. */
export async function isJsonlInput(input: string): Promise<boolean> {
  if (path.extname(input) !== ".jsonl") return false;
  const stat = await fs.stat(input).catch(() => null);
  return stat?.isFile() ?? false;
}

function assertJsonlOptions(opts: ConvertOptions, format: RowFormat): void {
  const needsRollouts = (what: string) =>
    new UserInputError(
      `${what} needs a rollout or jobs directory; ${opts.jobs} is a JSONL file, which has no rollout folders behind it. ` +
        "Convert the jobs folder instead, or leave it out.",
    );
  if (opts.groupAdvantage !== undefined) throw needsRollouts(opt("groupAdvantage"));
  if (opts.rewardVector) throw needsRollouts(opt("rewardVector"));
  if (opts.subagentRows) throw needsRollouts(opt("subagentRows"));
  if (opts.canonicalSelection !== undefined) throw needsRollouts(opt("canonicalSelection"));
  // Rows in a file are no longer model calls: there is nothing to read upstream's way.
  if (opts.upstreamRows) throw needsRollouts(opt("upstreamRows"));
  if (format === "tokens") throw needsRollouts(opt("format", "tokens"));
  if (path.resolve(opts.out) === path.resolve(opts.jobs))
    throw new UserInputError(
      `${opt("out")} must differ from the source JSONL (${opts.jobs}); give the rows another file.`,
    );
  if (opts.manifest && path.resolve(opts.manifest) === path.resolve(opts.jobs))
    throw new UserInputError(`${opt("manifest")} must differ from the source JSONL (${opts.jobs}).`);
}

export async function convertJsonlInput(
  opts: ConvertOptions,
  format: RowFormat,
  rowMode: RowMode,
): Promise<ConvertResult> {
  assertJsonlOptions(opts, format);
  const window = await messageWindowOf(format, opts);
  const display = opts.jobs;
  const lines = await readSourceLines(opts.jobs, display);
  const sink = await ManifestSink.open(opts.manifest, opts.keepGroups ?? true);
  const stats = new ConvertStats(format, rowMode, sink);
  stats.redact = opts.redact ?? true;
  const writer = await RowWriter.open(opts.out);
  const ctx = { redact: stats.redact, stats, writer };
  await commitRows({ writer, sink, stats }, opts.expectedRows, async () => {
    await sink.addSource(display);
    for (const line of lines) {
      stats.rolloutsSeen++;
      const produced =
        format === "prime-sft"
          ? primeOne(primeRowOf(line, { display, minReward: opts.minReward }))
          : trlRowsOf(line, { display, minReward: opts.minReward, rowMode, window });
      stats.addSkips(produced.skips);
      stats.exchangesSeen += produced.exchanges;
      for (const { row, toolCalls } of produced.rows) await emitRow(ctx, row, toolCalls, {});
    }
  });
  const manifest = stats.manifest(null);
  // As for rollouts: a trl-sft manifest carries the window's totals (zeros with --context-policy full).
  if (format === "trl-sft") Object.assign(manifest, window?.totals ?? NO_WINDOW);
  await sink.finish(manifest);
  return { rows: stats.rowsWritten, rollouts: stats.rolloutsSeen, manifest, groups: null };
}

/** A prime-sft source line gives at most one row; each line is one model call's conversation. */
function primeOne(p: ReturnType<typeof primeRowOf>) {
  return {
    rows: p.row ? [{ row: p.row, toolCalls: p.toolCalls }] : [],
    // Repairs ride with the skips, as a rollout's do (ConvertStats.addSkips counts them apart).
    skips: { ...(p.skip ? { [p.skip]: 1 } : {}), ...p.repairs },
    // Upstream counts no exchanges for a prime-sft JSONL source.
    exchanges: 0,
  };
}
