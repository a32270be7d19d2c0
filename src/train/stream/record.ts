// One stream record (`benchflow.rollout-stream.v1`) from a finished rollout and its model calls.
import path from "node:path";
import { isSuccessful, policyVersions, readExchanges } from "../../jobs-dir/exchange.js";
import { TRAJECTORY } from "../../jobs-dir/index.js";
import type { StreamRecord } from "../../schemas/rollout-stream.js";
import type { Normalisation } from "../groups/advantage.js";
import type { GroupKey, MemberState, Settled } from "../groups/groups.js";
import type { RolloutFacts } from "../rollouts/facts.js";
import { tokenReport } from "../tokens/tokens.js";

export interface FinishedRollout {
  facts: RolloutFacts;
  record: StreamRecord;
  member: MemberState;
}

export async function finishRollout(
  facts: RolloutFacts,
  key: (facts: RolloutFacts, versions: string[]) => GroupKey,
  retried: { replacedBy: string | null } | null,
): Promise<FinishedRollout> {
  const file = path.join(facts.dir, TRAJECTORY);
  const display = path.join(facts.displayDir, TRAJECTORY);
  // A run that died may have cut its last call short; only a finished rollout's calls must parse.
  const exchanges =
    facts.resultState === "present"
      ? await readExchanges(file, display)
      : await readExchanges(file, display).catch(() => undefined);
  const tokens = tokenReport(exchanges);
  const versions = policyVersions(exchanges);
  const { id, key: groupValues } = key(facts, versions);
  const r = facts.result;
  const record: StreamRecord = {
    schema_version: "benchflow.rollout-stream.v1",
    job: facts.job.id,
    rollout: facts.name,
    rollout_path: facts.relPath,
    task: facts.task,
    agent: facts.agent,
    model: facts.model,
    group_id: id,
    group: groupValues,
    reward: facts.reward,
    ...(facts.rewards ? { rewards: facts.rewards } : {}),
    scored: facts.reward !== null,
    outcome: facts.outcome,
    error: facts.error,
    result: facts.resultState,
    finished_at: facts.finishedAt,
    token_capture: tokens.summary,
    calls: tokens.calls,
    ...(tokens.sequences ? { sequences: tokens.sequences } : {}),
    advantage: null,
    group_complete: null,
    outcome_category: facts.outcomeCategory,
    in_baseline: false,
    withheld: null,
    normalisation: null,
    group_rollouts: null,
    group_scored: null,
    group_mean: null,
    group_std: null,
    replaces: r?.replaces ?? null,
    retried: retried !== null,
    policy_versions: versions,
  };
  const member: MemberState = {
    resultState: facts.resultState,
    reward: facts.reward,
    calls: exchanges?.length ?? 0,
    okCalls: exchanges?.filter(isSuccessful).length ?? 0,
  };
  return { facts, record, member };
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
