// Counters for one conversion and the manifest they become.

import type { Manifest, RetriedAttempt, SkipReason } from "../../schemas/train-manifest.js";
import { SKIP_REASONS } from "../../schemas/train-manifest.js";
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
  readonly retried: RetriedAttempt[] = [];
  readonly notTrainingGrade: Array<{ rollout_dir: string; reason: string }> = [];
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

  addSkips(skips: Partial<Record<SkipReason, number>>): void {
    for (const [k, n] of Object.entries(skips)) this.skips[k as SkipReason] += n ?? 0;
  }

  manifest(signal: { totals: GroupTotals } | null): Manifest {
    return {
      schema_version: "benchflow.train-manifest.v1",
      format: this.format,
      row_mode: this.rowMode,
      rollouts_seen: this.rolloutsSeen,
      exchanges_seen: this.exchangesSeen,
      rows_written: this.rowsWritten,
      rows_with_tool_calls: this.rowsWithToolCalls,
      ...this.skips,
      sources: this.sink.sources,
      retried: this.retried,
      not_training_grade: this.notTrainingGrade,
      redact: this.redact,
      rows_redacted: this.rowsRedacted,
      secrets_redacted: this.secretsRedacted,
      secrets_in_tokens: this.secretsInTokens,
      training_signal: signal
        ? {
            group_advantage: signal.totals.normalisation,
            group_by: signal.totals.by,
            std_ddof: 1,
            eps: 0.0001,
            groups: this.sink.groups,
          }
        : null,
    };
  }
}
