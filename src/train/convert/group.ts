// One group of a conversion: read its members' calls, settle the seed's rules, then write its rows
// with their advantages, or none when the group is withheld.

import { groupBlock, memberWithheld, type Settled, settleGroup } from "../../jobs-dir/groups/groups.js";
import { attributionField, type Rollout, rewardsField } from "../../jobs-dir/index.js";
import type { GroupMember } from "../../schemas/train-manifest.js";
import type { GroupByKey, MixKey } from "../../schemas/train-rows.js";
import { advantageVectors, rewardVectorOf, vectorNamesDiffer } from "../signal/reward-vector.js";
import { emitRow, readCalls, type WriteContext } from "./io.js";
import type { RowsOutcome } from "./rows.js";
import { rowsOfRollout } from "./rows.js";
import type { GroupTotals } from "./types.js";

export interface ConvertGroup {
  key: Record<string, string | null>;
  /** The keys it was formed by (groupKeyOf's `by`). */
  by: readonly GroupByKey[];
  members: Rollout[];
  /** What its members differ in that the default grouping keeps apart (MixCheck). */
  mixed?: MixKey[];
}

interface GroupContext extends WriteContext {
  totals: GroupTotals;
}

export async function writeGroup(id: string, group: ConvertGroup, ctx: GroupContext): Promise<void> {
  const { stats, totals } = ctx;
  const ref = { id, key: group.key, by: group.by };
  const norm = totals.normalisation;
  let members = group.members;
  const produced: Array<RowsOutcome | null> = members.map(() => null);
  // A group already withheld by its results needs none of its calls read.
  if (!settleGroup(members, norm).withheld) {
    members = [...members];
    for (const [i, r] of members.entries()) {
      const p = await readCalls(r, stats, ctx.format, ctx.includeNonAgentCalls);
      members[i] = { ...r, calls: p.calls };
      produced[i] = rowsOfRollout(p.exchanges ?? [], r, { ...ctx, roles: p.roles });
    }
  }
  const s = settleGroup(members, norm);
  // --reward-vector: each component normalised like the scalar, over the same baseline members.
  const vectors = ctx.rewardVector
    ? members.map((r) => ({ reward: r.reward, vector: rewardVectorOf(r.rewards, r.reward) }))
    : [];
  const advVectors = ctx.rewardVector && !s.withheld ? advantageVectors(vectors, norm) : [];
  const namesDiffer = {
    ...(ctx.rewardVector && vectorNamesDiffer(vectors) ? { vector_names_differ: true as const } : {}),
    ...(group.mixed && group.mixed.length > 0 ? { mixed: [...group.mixed] } : {}),
  };
  totals.groups++;
  totals.unscored += members.filter((m) => m.reward === null).length;
  if (s.withheld) {
    totals.withheld[s.withheld] = (totals.withheld[s.withheld] ?? 0) + 1;
    stats.skip("skipped_withheld_group", members.length);
  } else if (s.scored < 2) {
    totals.singleScored++;
  }
  for (const [i, r] of members.entries()) {
    const p = produced[i];
    if (s.withheld || !p) continue;
    // --min-reward drops only this rollout's rows: the advantages above used the whole group.
    if (ctx.minReward !== undefined && (r.reward === null || r.reward < ctx.minReward)) {
      stats.skip("skipped_reward");
      continue;
    }
    stats.addSkips(p.skips);
    if (p.notTrainingGrade)
      stats.notTrainingGrade.push({ rollout_dir: r.displayDir, reason: p.notTrainingGrade });
    for (const x of p.secretsInTokens ?? []) stats.secretsInTokens.push({ rollout_dir: r.displayDir, ...x });
    const block = {
      ...groupBlock(ref, s, norm, { error: r.outcome.maskCategory, excluded: s.excluded[i] }),
      ...namesDiffer,
    };
    const signal = {
      outcome: r.outcome.scoreOutcome,
      outcome_category: r.outcome.category,
      ...attributionField(r),
      in_baseline: s.inBaseline[i] ?? false,
      advantage: s.advantages[i] ?? null,
      group: block,
      ...(ctx.rewardVector
        ? { reward_vector: vectors[i]?.vector ?? null, advantage_vector: advVectors[i] ?? null }
        : {}),
    };
    for (const { row, toolCalls } of p.rows) await emitRow(ctx, row, toolCalls, signal);
  }
  await stats.sink.addGroup({
    ...groupBlock(ref, s, norm, { error: null }),
    withheld: s.withheld,
    withheld_outcomes: withheldOutcomes(members, s.withheld),
    ...namesDiffer,
    members: members.map((r, i) => memberEntry(r, i, s)),
  });
}

/** Why, in the outcome table's words: the categories of the members whose results withheld the group. */
function withheldOutcomes(members: Rollout[], withheld: Settled["withheld"]): string[] {
  if (!withheld) return [];
  const out = new Set<string>();
  for (const r of members) {
    if (memberWithheld(r) === null) continue;
    out.add(r.outcome.category ?? (r.resultState === "present" ? "unscored" : `${r.resultState}_result`));
  }
  return [...out].sort();
}

function memberEntry(r: Rollout, i: number, s: Settled): GroupMember {
  const m: GroupMember = {
    rollout: r.name,
    rollout_dir: r.displayDir,
    job: r.job.id,
    reward: r.reward,
    ...rewardsField(r),
    advantage: s.advantages[i] ?? null,
    outcome: r.outcome.scoreOutcome,
    outcome_category: r.outcome.category,
    ...attributionField(r),
    error: r.outcome.maskCategory,
    in_baseline: s.inBaseline[i] ?? false,
    result: r.resultState,
  };
  const own = memberWithheld(r);
  if (own) m.withheld_reason = own;
  const excluded = s.excluded[i];
  if (excluded) m.excluded = excluded;
  return m;
}
