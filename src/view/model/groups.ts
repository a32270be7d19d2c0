// Groups as `bench train` makes them: train's keys (groupKeyOf), its withheld rules and advantages
// (settleGroup over the members' results and model-call counts). Nothing here decides a rule.
import { createHash } from "node:crypto";
import type { Normalisation } from "../../jobs-dir/groups/advantage.js";
import {
  groupKeyOf,
  memberWithheld,
  parseGroupBy,
  policyVersionKey,
  type Settled,
  settleGroup,
} from "../../jobs-dir/groups/groups.js";
import type { Rollout } from "../../jobs-dir/index.js";
import { DEFAULT_GROUP_BY, type GroupByKey, type WithheldReason } from "../../schemas/train-rows.js";
import type { RunIndex } from "./run-index.js";

export interface ViewGroup {
  /** URL-safe id of the group (a hash of train's group id). */
  urlId: string;
  /** train's group id, e.g. `task=hello|agent=bench-agent|model=vllm/policy`. */
  id: string;
  key: Record<string, string | null>;
  members: Rollout[];
  settled: Settled;
  /** Each member's own reason to withhold the group, when it has one. */
  memberReasons: Array<WithheldReason | null>;
  withheld: WithheldReason | null;
  /** Two or more scored members whose rewards are all equal: the group teaches nothing. */
  zeroSpread: boolean;
}

export interface GroupOptions {
  groupBy?: string | readonly string[];
  advantage?: Normalisation;
}

/** The keys used: the user's --group-by, else every reader's default (the group identity). */
export function groupByFor(groupBy?: string | readonly string[]): GroupByKey[] {
  if (groupBy !== undefined && groupBy !== "") return parseGroupBy(groupBy);
  return [...DEFAULT_GROUP_BY];
}

export function urlIdOf(groupId: string): string {
  return createHash("sha256").update(groupId).digest("base64url").slice(0, 16);
}

const cache = new WeakMap<RunIndex, Map<string, { version: number; groups: ViewGroup[] }>>();

/** The live rollouts' groups, in the order train meets them (path order). */
export function groupsOf(index: RunIndex, by: readonly GroupByKey[], norm: Normalisation): ViewGroup[] {
  const k = `${by.join(",")}/${norm}`;
  let perIndex = cache.get(index);
  if (!perIndex) {
    perIndex = new Map();
    cache.set(index, perIndex);
  }
  const hit = perIndex.get(k);
  if (hit && hit.version === index.version) return hit.groups;
  const byId = new Map<string, { key: Record<string, string | null>; members: Rollout[] }>();
  for (const r of index.live()) {
    const { id, key } = groupKeyOf(r, by, policyVersionKey(r));
    const g = byId.get(id);
    if (g) g.members.push(r);
    else byId.set(id, { key, members: [r] });
  }
  const groups: ViewGroup[] = [];
  for (const [id, g] of byId) {
    // The index reads every rollout with its calls: a rollout without llm_trajectory.jsonl has 0.
    const settled = settleGroup(g.members, norm);
    const scored = g.members.map((m) => m.reward).filter((x): x is number => x !== null);
    groups.push({
      urlId: urlIdOf(id),
      id,
      key: g.key,
      members: g.members,
      settled,
      memberReasons: g.members.map(memberWithheld),
      withheld: settled.withheld,
      zeroSpread: !settled.withheld && scored.length >= 2 && scored.every((x) => x === scored[0]),
    });
  }
  perIndex.set(k, { version: index.version, groups });
  return groups;
}
