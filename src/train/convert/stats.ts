// Counters for one conversion and the manifest they become.

import type { Repairs } from "../../jobs-dir/conversation/repair.js";
import type { Rollout } from "../../jobs-dir/index.js";
import type {
  InferredRollout,
  Manifest,
  RetriedAttempt,
  SkipReason,
  SubagentStat,
} from "../../schemas/train-manifest.js";
import { SKIP_REASONS, SUBAGENT_STATS } from "../../schemas/train-manifest.js";
import type { GroupByKey } from "../../schemas/train-rows.js";
import type { RowFormat } from "../validate/validate.js";
import type { ManifestSink } from "./manifest-writer.js";
import type { RowMode } from "./rows.js";
import type { GroupTotals } from "./types.js";

export class ConvertStats {
  rolloutsSeen = 0;
  exchangesSeen = 0;
  rowsWritten = 0;
  rowsWithToolCalls = 0;
  readonly skips = Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<SkipReason, number>;
  readonly repairs: Repairs = { tool_call_ids_rewritten: 0, tool_messages_merged: 0 };
  readonly subagents = Object.fromEntries(SUBAGENT_STATS.map((r) => [r, 0])) as Record<SubagentStat, number>;
  readonly retried: RetriedAttempt[] = [];
  readonly notTrainingGrade: Array<{ rollout_dir: string; reason: string }> = [];
  /** Rollouts whose result.json lacked fields (upstream's): what was filled in, from where. */
  readonly inferred: InferredRollout[] = [];
  // Redaction (src/train/redact): what the rows written had replaced, and the tokens rows left out.
  redact = true;
  rowsRedacted = 0;
  secretsRedacted = 0;
  readonly secretsInTokens: Array<{ rollout_dir: string; thread: number; reason: string }> = [];

  constructor(
    readonly format: RowFormat,
    readonly rowMode: RowMode,
    /** Where the long lists (groups, sources) go: a side file, and memory if asked. */
    readonly sink: ManifestSink,
  ) {}

  skip(reason: SkipReason, n = 1): void {
    this.skips[reason] += n;
  }

  noteInferred(r: Rollout): void {
    if (Object.keys(r.inferred).length === 0 && Object.keys(r.ignored).length === 0) return;
    const ignored = Object.keys(r.ignored).length > 0 ? { ignored: r.ignored } : {};
    this.inferred.push({ rollout_dir: r.displayDir, inferred: r.inferred, ...ignored });
  }

  /** A rollout's skips, and the repairs made to its rows (counted apart: rows were still written). */
  addSkips(skips: Partial<Record<SkipReason | keyof Repairs, number>>): void {
    for (const [k, n] of Object.entries(skips)) {
      if (k in this.repairs) this.repairs[k as keyof Repairs] += n ?? 0;
      else this.skips[k as SkipReason] += n ?? 0;
    }
  }

  /** `signal`: null when neither --group-advantage nor --reward-vector was asked for. */
  manifest(signal: { totals: GroupTotals | null; by: GroupByKey[]; rewardVector: boolean } | null): Manifest {
    const totals = signal?.totals ?? null;
    return {
      schema_version: "benchflow.train-manifest.v1",
      format: this.format,
      row_mode: this.rowMode,
      rollouts_seen: this.rolloutsSeen,
      exchanges_seen: this.exchangesSeen,
      rows_written: this.rowsWritten,
      rows_with_tool_calls: this.rowsWithToolCalls,
      ...this.skips,
      ...this.repairs,
      ...this.subagents,
      // A subagent call that wrote no row: kept out of the parent's rows, and not its own row.
      subagent_exchanges_excluded: Math.max(
        0,
        this.subagents.subagent_exchanges_seen - this.subagents.subagent_rows_written,
      ),
      sources: this.sink.sources,
      retried: this.retried,
      not_training_grade: this.notTrainingGrade,
      inferred: this.inferred,
      redact: this.redact,
      rows_redacted: this.rowsRedacted,
      secrets_redacted: this.secretsRedacted,
      secrets_in_tokens: this.secretsInTokens,
      training_signal: signal
        ? {
            reward_vector: signal.rewardVector,
            group_advantage: totals?.normalisation ?? null,
            group_by: signal.by,
            std_ddof: 1,
            eps: 0.0001,
            groups: this.sink.groups,
          }
        : null,
    };
  }
}
