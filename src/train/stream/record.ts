// One stream record (`benchflow.rollout-stream.v1`) from a finished rollout and its model calls.
import type { Normalisation } from "../../jobs-dir/groups/advantage.js";
import type { GroupKey, Settled } from "../../jobs-dir/groups/groups.js";
import {
  attributionField,
  callFactsOf,
  type Rollout,
  readRolloutExchanges,
  rewardsField,
  trainingCalls,
} from "../../jobs-dir/index.js";
import type { StreamRecord } from "../../schemas/rollout-stream.js";
import { tokenReport } from "../tokens/tokens.js";

export interface FinishedRollout {
  /** The rollout with its call facts (what the group rules read). */
  rollout: Rollout;
  record: StreamRecord;
}

/** The record of a final rollout; a replaced attempt's says so (`retried`) and joins no group. */
export async function finishRollout(
  r: Rollout,
  key: (r: Rollout) => GroupKey,
  includeNonAgentCalls = false,
): Promise<FinishedRollout> {
  // A run that died may have cut its last call short; only a finished rollout's calls must parse.
  const all =
    r.resultState === "present"
      ? await readRolloutExchanges(r)
      : await readRolloutExchanges(r).catch(() => undefined);
  // Only the agent's own calls are training data (exchange.ts); the others are counted.
  const own = all && trainingCalls(all, includeNonAgentCalls);
  const tokens = tokenReport(own?.calls);
  const rollout: Rollout = { ...r, calls: callFactsOf(all) };
  const { id, key: groupValues } = key(rollout);
  const record: StreamRecord = {
    schema_version: "benchflow.rollout-stream.v1",
    job: r.job.id,
    rollout: r.name,
    rollout_path: r.relPath,
    task: r.task,
    agent: r.agent,
    model: r.model,
    group_id: id,
    group: groupValues,
    reward: r.reward,
    ...rewardsField(r),
    scored: r.reward !== null,
    outcome: r.outcome.scoreOutcome,
    error: r.outcome.maskCategory,
    result: r.resultState,
    finished_at: r.finishedAt,
    token_capture: tokens.summary,
    calls: tokens.calls,
    ...(tokens.sequences ? { sequences: tokens.sequences } : {}),
    advantage: null,
    group_complete: null,
    outcome_category: r.outcome.category,
    ...attributionField(r),
    in_baseline: false,
    withheld: null,
    normalisation: null,
    group_rollouts: null,
    group_scored: null,
    group_mean: null,
    group_std: null,
    replaces: r.replaces,
    retried: r.replaced !== null,
    policy_versions: rollout.calls?.policyVersions ?? [],
    non_agent_calls: own?.nonAgent ?? 0,
  };
  return { rollout, record };
}

/** The group's verdict written into each member's record. */
export function applyGroup(
  members: readonly FinishedRollout[],
  s: Settled,
  normalisation: Normalisation,
  complete: boolean,
): StreamRecord[] {
  return members.map((m, i) => ({
    ...m.record,
    advantage: complete ? (s.advantages[i] ?? null) : null,
    group_complete: complete,
    in_baseline: complete ? (s.inBaseline[i] ?? false) : false,
    withheld: s.withheld,
    normalisation,
    group_rollouts: s.rollouts,
    group_scored: s.scored,
    group_mean: complete ? s.mean : null,
    group_std: complete ? s.std : null,
  }));
}
