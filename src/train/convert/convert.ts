// `bench train convert`: rollouts to training rows. Rollouts are read one job at a time; with
// --group-advantage a first pass keeps only each rollout's folder and group, and a second pass reads
// group by group (a group's rows wait until its withholding rules are settled). Memory follows the
// size of a group, not the number of rollouts.
import path from "node:path";
import { UserInputError } from "../../errors.js";
import { NORMALISATIONS } from "../../jobs-dir/groups/advantage.js";
import {
  groupKeyOf,
  JobSplitCheck,
  keysFor,
  MixCheck,
  parseGroupBy,
  policyVersionKey,
  unnamedRunNote,
} from "../../jobs-dir/groups/groups.js";
import {
  assertRollouts,
  attributionField,
  endedWithError,
  JOB_MARKERS,
  type Job,
  type JobRollouts,
  type JobsScan,
  looksLikeRollout,
  RESULT,
  type Rollout,
  readCanonicalSelection,
  readRollout,
  restrictScan,
  scanJobs,
  withCalls,
} from "../../jobs-dir/index.js";
import { checkOptionKeys, opt } from "../../options.js";
import { DEFAULT_GROUP_BY, type GroupByKey } from "../../schemas/train-rows.js";
import { mapLimit } from "../../util/limit.js";
import { rewardVectorOf } from "../signal/reward-vector.js";
import { messageWindowOf } from "../tokenizer/options.js";
import { NO_WINDOW } from "../tokenizer/window.js";
import { ROW_FORMATS, type RowFormat } from "../validate/validate.js";
import { type ConvertGroup, writeGroup } from "./group.js";
import { convertJsonlInput, isJsonlInput } from "./inputs/jsonl-input.js";
import { commitRows, emitRow, readCalls, type WriteContext } from "./io.js";
import { ManifestSink } from "./manifest-writer.js";
import { RowWriter } from "./row-writer.js";
import { type RowMode, rowsOfRollout } from "./rows.js";
import { ConvertStats } from "./stats.js";
import type { ConvertOptions, ConvertResult, GroupTotals } from "./types.js";

export type { ConvertOptions, ConvertResult, GroupTotals } from "./types.js";

/** Every option of convertJob: one not listed here is refused with the nearest name. */
const OPTIONS: Record<keyof ConvertOptions, true> = {
  jobs: true,
  out: true,
  format: true,
  rowMode: true,
  groupAdvantage: true,
  groupBy: true,
  minReward: true,
  manifest: true,
  keepGroups: true,
  upstreamRows: true,
  redact: true,
  expectedRows: true,
  canonicalSelection: true,
  rewardVector: true,
  subagentRows: true,
  includeNonAgentCalls: true,
  onWarning: true,
  contextPolicy: true,
  tokenizer: true,
  tokenizerRevision: true,
  maxLength: true,
};

function assertOptions(opts: ConvertOptions): { format: RowFormat; rowMode: RowMode } {
  checkOptionKeys("convertJob", opts, OPTIONS);
  // Without these, Node's own TypeError about `paths[0]` would be the message.
  if (typeof opts.jobs !== "string" || opts.jobs === "")
    throw new UserInputError(
      `jobs is required: the jobs folder to read (or one job or rollout folder), e.g. jobs: "jobs"`,
    );
  if (typeof opts.out !== "string" || opts.out === "")
    throw new UserInputError(
      `${opt("out")} is required: the file the rows go to, e.g. ${opt("out", "train/rows.jsonl")}`,
    );
  const format = opts.format ?? "prime-sft";
  if (!ROW_FORMATS.includes(format))
    throw new UserInputError(`${opt("format")}: unknown format "${format}"; use ${ROW_FORMATS.join(", ")}.`);
  const rowMode = opts.rowMode ?? "rollout";
  if (rowMode !== "rollout" && rowMode !== "exchange")
    throw new UserInputError(`${opt("rowMode")}: use rollout or exchange, not "${rowMode}".`);
  if (format === "tokens" && opts.rowMode === "exchange") {
    throw new UserInputError(
      `${opt("rowMode", "exchange")} does not apply to ${opt("format", "tokens")}, which writes one row per conversation.`,
    );
  }
  if (opts.groupAdvantage !== undefined && !NORMALISATIONS.includes(opts.groupAdvantage)) {
    throw new UserInputError(`${opt("groupAdvantage")}: use grpo or loo, not "${opts.groupAdvantage}".`);
  }
  if (opts.subagentRows && format === "tokens") {
    throw new UserInputError(
      `${opt("subagentRows")} does not apply to ${opt("format", "tokens")}, whose rows are already one per conversation (kind subagent).`,
    );
  }
  if (opts.minReward !== undefined && !Number.isFinite(opts.minReward))
    throw new UserInputError(`${opt("minReward")}: give a number, for example 0.5.`);
  return { format, rowMode };
}

/** Writing over a file we read would lose the input: refuse before touching anything. */
async function assertOutputs(opts: ConvertOptions, scan: JobsScan): Promise<void> {
  const out = opt("out");
  const manifest = opt("manifest");
  const targets: Array<[string, string]> = [[out, opts.out]];
  if (opts.manifest) targets.push([manifest, opts.manifest]);
  if (opts.manifest && path.resolve(opts.manifest) === path.resolve(opts.out)) {
    throw new UserInputError(
      `${manifest} and ${out} are the same file (${opts.out}); give the manifest its own name.`,
    );
  }
  const jobFiles = new Set(scan.jobs.flatMap((j) => JOB_MARKERS.map((f) => path.join(j.dir, f))));
  for (const [flag, file] of targets) {
    const abs = path.resolve(file);
    let clash = abs === scan.root || jobFiles.has(abs);
    // Anything inside a rollout folder is that rollout's data.
    for (
      let dir = path.dirname(abs);
      !clash && (dir === scan.root || dir.startsWith(scan.root + path.sep));
      dir = path.dirname(dir)
    ) {
      clash = await looksLikeRollout(dir, path.basename(dir));
    }
    if (clash)
      throw new UserInputError(
        `${flag} ${file} is one of the inputs under ${opts.jobs}; write it somewhere else, for example train/rows.jsonl.`,
      );
  }
}

/** Replaced attempts are counted and listed, never converted; the rest come back in path order. */
function liveRollouts(j: JobRollouts, stats: ConvertStats, opts: ConvertOptions): Rollout[] {
  const live: Rollout[] = [];
  for (const r of j.rollouts) {
    stats.noteInferred(r);
    const { replaced } = r;
    if (replaced) {
      stats.skip("skipped_retried");
      stats.retried.push({
        rollout: r.name,
        rollout_dir: r.displayDir,
        replaced_by: replaced.replacedBy,
        reason: replaced.reason,
      });
      continue;
    }
    if (r.resultProblem) opts.onWarning?.(`${path.join(r.displayDir, RESULT)}: ${r.resultProblem}`);
    stats.rolloutsSeen++;
    live.push(r);
  }
  return live;
}

export async function convertJob(opts: ConvertOptions): Promise<ConvertResult> {
  const { format, rowMode } = assertOptions(opts);
  // A results.jsonl or a trainer JSONL in place of a jobs folder (convert/inputs/).
  if (await isJsonlInput(opts.jobs)) return convertJsonlInput(opts, format, rowMode);
  const by = opts.groupBy === undefined ? [...DEFAULT_GROUP_BY] : parseGroupBy(opts.groupBy);
  const window = await messageWindowOf(format, opts);
  let scan = await scanJobs(opts.jobs);
  assertRollouts(scan);
  // Checked before anything is written; the rollouts it leaves out count nowhere.
  if (opts.canonicalSelection)
    scan = await restrictScan(scan, await readCanonicalSelection(opts.canonicalSelection), opts.jobs);
  await assertOutputs(opts, scan);
  const sink = await ManifestSink.open(opts.manifest, opts.keepGroups ?? true);
  const stats = new ConvertStats(format, rowMode, sink);
  const writer = await RowWriter.open(opts.out);
  let totals: GroupTotals | null = null;
  await commitRows({ writer, sink, stats }, opts.expectedRows, async () => {
    const redact = opts.redact ?? true;
    stats.redact = redact;
    const ctx: WriteContext = {
      format,
      rowMode,
      minReward: opts.minReward,
      upstreamRows: opts.upstreamRows,
      stats,
      writer,
      rewardVector: opts.rewardVector === true,
      subagentRows: opts.subagentRows === true,
      includeNonAgentCalls: opts.includeNonAgentCalls === true,
      window,
      redact,
    };
    if (opts.groupAdvantage) {
      totals = {
        normalisation: opts.groupAdvantage,
        by,
        groups: 0,
        unscored: 0,
        singleScored: 0,
        withheld: {},
        mixed: null,
      };
      const { groups, mix } = await groupsOf(scan, by, stats, opts);
      totals.mixed = mix.summary();
      for (const [id, g] of groups) {
        // Each group's folders are let go once its rows are out.
        groups.delete(id);
        const where = (m: GroupRef) => ({
          job: m.job,
          root: scan.root,
          displayRoot: scan.displayRoot,
          infer: true,
        });
        const members = await mapLimit(g.members, 8, (m) => readRollout(m.dir, where(m)));
        const group: ConvertGroup = { key: g.key, by: g.by, members, mixed: mix.mixed(id) };
        await writeGroup(id, group, { ...ctx, totals });
      }
    } else {
      for await (const j of scan.eachJob())
        for (const r of liveRollouts(j, stats, opts)) await writePlain(r, ctx);
    }
  });
  const rewardVector = opts.rewardVector === true;
  const manifest = stats.manifest(totals || rewardVector ? { totals, by, rewardVector } : null);
  // Upstream's trl-sft manifest always carries the window's totals (zeros with --context-policy full).
  if (format === "trl-sft") Object.assign(manifest, window?.totals ?? NO_WINDOW);
  await sink.finish(manifest);
  return { rows: stats.rowsWritten, rollouts: stats.rolloutsSeen, manifest, groups: totals };
}

/** Without groups: upstream's rules; a rollout that ended with an error gives no row. */
async function writePlain(r: Rollout, ctx: WriteContext): Promise<void> {
  const { stats } = ctx;
  if (r.resultState === "missing") return stats.skip("skipped_no_result");
  if (r.resultState === "truncated") return stats.skip("skipped_truncated_result");
  if (endedWithError(r)) return stats.skip("skipped_terminal_error");
  if (ctx.minReward !== undefined && (r.reward === null || r.reward < ctx.minReward))
    return stats.skip("skipped_reward");
  const { exchanges, roles } = await readCalls(r, stats, ctx.format, ctx.includeNonAgentCalls);
  const produced = rowsOfRollout(exchanges ?? [], r, { ...ctx, roles });
  stats.addSkips(produced.skips);
  if (produced.notTrainingGrade)
    stats.notTrainingGrade.push({ rollout_dir: r.displayDir, reason: produced.notTrainingGrade });
  const vector = ctx.rewardVector ? { reward_vector: rewardVectorOf(r.rewards, r.reward) } : {};
  for (const s of produced.secretsInTokens ?? [])
    stats.secretsInTokens.push({ rollout_dir: r.displayDir, ...s });
  for (const { row, toolCalls } of produced.rows)
    await emitRow(ctx, row, toolCalls, {
      outcome: r.outcome.scoreOutcome,
      outcome_category: r.outcome.category,
      ...attributionField(r),
      in_baseline: false,
      ...vector,
    });
}

interface GroupRef {
  dir: string;
  job: Job;
}

/** First pass: each live rollout's folder under its group id, groups in path order. */
async function groupsOf(scan: JobsScan, by: GroupByKey[], stats: ConvertStats, opts: ConvertOptions) {
  const groups = new Map<
    string,
    { key: Record<string, string | null>; by: readonly GroupByKey[]; members: GroupRef[] }
  >();
  const split = new JobSplitCheck(by);
  const mix = new MixCheck(by);
  let unnamed = 0;
  for await (const j of scan.eachJob()) {
    for (const r of liveRollouts(j, stats, opts)) {
      if (keysFor(r, by) !== by) unnamed++;
      // A result without its own version is grouped by the versions its calls name.
      const version = by.includes("policy_version")
        ? policyVersionKey(r.policyVersion || r.policyVersionStamped ? r : await withCalls(r))
        : null;
      const { id, key, by: used } = groupKeyOf(r, by, version);
      split.add(r, id, version);
      mix.add(id, r, version ?? r.policyVersion);
      const g = groups.get(id);
      if (g) g.members.push({ dir: r.dir, job: r.job });
      else groups.set(id, { key, by: used, members: [{ dir: r.dir, job: r.job }] });
    }
  }
  const warning = split.warning() ?? unnamedRunNote(unnamed);
  if (warning) opts.onWarning?.(warning);
  return { groups, mix };
}
