// `--reward-vector`: a rollout's reward components with names, so a trainer can weigh them itself.
// Source "verifier" (upstream's for a rollout with no rubric): every finite number under result.json
// `rewards`, nested objects flattened with ".", `reward` first. Booleans are verdicts, not rewards,
// and are left out. With --group-advantage, each component gets its own advantage over the scored
// members of the group that have it (`advantage_vector`), the same normalisation as the scalar.

import { baselineOf, type Normalisation } from "../../jobs-dir/groups/advantage.js";
import type { RewardVector } from "../../schemas/train-rows.js";

export type { RewardVector } from "../../schemas/train-rows.js";

export const VERIFIER_FORMULA = "reward = rewards.reward (as written by the verifier)";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function flatten(prefix: string, value: unknown, out: Array<[string, number]>): void {
  if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) flatten(prefix ? `${prefix}.${k}` : k, v, out);
    return;
  }
  if (typeof value === "number" && Number.isFinite(value)) out.push([prefix, value]);
}

/**
 * The vector of one rollout; null when it is unscored (never a vector of zeros). `reward` is the
 * rollout's scored reward (rewards.reward); it leads the vector even when `rewards` lacks the key
 * (a legacy top-level reward).
 */
export function rewardVectorOf(rewards: unknown, reward: number | null): RewardVector | null {
  if (reward === null) return null;
  const pairs: Array<[string, number]> = [];
  flatten("", rewards, pairs);
  if (!pairs.some(([n]) => n === "reward")) pairs.unshift(["reward", reward]);
  // A stable sort: `reward` first, the rest in the order the verifier wrote them.
  pairs.sort((a, b) => Number(a[0] !== "reward") - Number(b[0] !== "reward"));
  return {
    source: "verifier",
    names: pairs.map(([n]) => n),
    kinds: pairs.map(() => "verifier"),
    weights: pairs.map(() => null),
    values: pairs.map(([, v]) => v),
    formula: VERIFIER_FORMULA,
  };
}

export interface VectorMember {
  /** The member's scalar reward: an unscored member gives no component to any baseline. */
  reward: number | null;
  vector: RewardVector | null;
}

/**
 * One advantage per component of each member's own vector, over the scored members that have that
 * component; null for a member without a vector. A component fewer than two members have gets null.
 */
export function advantageVectors(
  members: readonly VectorMember[],
  normalisation: Normalisation,
): Array<Array<number | null> | null> {
  const names: string[] = [];
  for (const m of members) for (const n of m.vector?.names ?? []) if (!names.includes(n)) names.push(n);
  const perName = new Map<string, Array<number | null>>();
  for (const name of names) {
    const values = members.map((m) => {
      if (m.reward === null || !m.vector) return null;
      const i = m.vector.names.indexOf(name);
      return i < 0 ? null : (m.vector.values[i] ?? null);
    });
    const scored = values.filter((v): v is number => v !== null);
    const advs = scored.length < 2 ? [] : baselineOf(scored, normalisation).advantages;
    let k = 0;
    perName.set(
      name,
      values.map((v) => (v === null || advs.length === 0 ? null : (advs[k++] ?? null))),
    );
  }
  return members.map((m, i) => (m.vector ? m.vector.names.map((n) => perName.get(n)?.[i] ?? null) : null));
}

/** Whether the members' vectors name different components (the group block says so). */
export function vectorNamesDiffer(members: readonly VectorMember[]): boolean {
  const seen = new Set(members.filter((m) => m.vector).map((m) => JSON.stringify(m.vector?.names)));
  return seen.size > 1;
}
