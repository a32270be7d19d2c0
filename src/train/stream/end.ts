// What a stream says when it ends: how many rollouts came out, how many ended with each outcome
// (final attempts only: a replaced attempt counts in no group), the planned rollouts the run never
// started, and why it stopped starting them.

import type { RunStop } from "../../jobs-dir/index.js";
import { AGENT_ERROR_CATEGORIES, VERIFIER_ERROR_CATEGORIES } from "../../schemas/outcome.js";
import type { StreamRecord } from "../../schemas/rollout-stream.js";

export interface StreamEnd {
  /** Records streamed, replaced attempts included. */
  rollouts: number;
  /** Final rollouts per outcome category; every category of src/schemas/outcome.ts is present. */
  outcomes: Record<string, number>;
  /** Summed from summary.json `not_started` (and jobs left waiting once the run stopped). */
  notStarted: number;
  /** Set when the run stopped starting rollouts. */
  stopped: RunStop | null;
}

export class StreamTally {
  private rollouts = 0;
  private readonly outcomes: Record<string, number> = Object.fromEntries(
    [...AGENT_ERROR_CATEGORIES, ...VERIFIER_ERROR_CATEGORIES].map((c) => [c, 0]),
  );

  add(records: readonly StreamRecord[]): readonly StreamRecord[] {
    for (const r of records) {
      this.rollouts++;
      const c = r.outcome_category;
      if (!r.retried && c) this.outcomes[c] = (this.outcomes[c] ?? 0) + 1;
    }
    return records;
  }

  end(notStarted: number, stopped: RunStop | null): StreamEnd {
    return { rollouts: this.rollouts, outcomes: { ...this.outcomes }, notStarted, stopped };
  }
}

/** The counts the end-of-stream line names: the failures a trainer must not read as rewards. */
export function endCounts(end: StreamEnd): string {
  const o = end.outcomes;
  return `${o.provider_error ?? 0} provider_error, ${o.config_error ?? 0} config_error, ${o.task_error ?? 0} task_error, ${end.notStarted} not started`;
}
