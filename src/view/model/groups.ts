// Groups as `bench train` makes them: train's keys (groupKeyOf), its withheld rules and advantages
// (settleGroup over the members' results and model-call counts). Nothing here decides a rule.
import { createHash } from "node:crypto";
import { DEFAULT_GROUP_BY, type GroupByKey, type WithheldReason } from "../../schemas/train-rows.js";
import type { Normalisation } from "../../train/groups/advantage.js";
import {
  groupKeyOf,
  type MemberState,
  memberWithheld,
  parseGroupBy,
  type Settled,
  settleGroup,
} from "../../train/groups/groups.js";
import type { RolloutFacts } from "../../train/rollouts/facts.js";
import type { RunIndex } from "./run-index.js";
import type { RolloutSummary } from "./summary.js";

export interface ViewGroup {
  /** URL-safe id of the group (a hash of train's group id). */
  urlId: string;
  /** train's group id, e.g. `task=hello|agent=bench-agent|model=vllm/policy`. */
  id: string;
  key: Record<string, string | null>;
  members: RolloutSummary[];
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

/**
 * The keys used: the user's --group-by, else train's default, less `job` when the folder holds the
 * trial-NN repeat jobs of `--trials N` (each repeat is a job of its own; the group is the repeats).
 */
export function groupByFor(index: RunIndex, groupBy?: string | readonly string[]): GroupByKey[] {
  if (groupBy !== undefined && groupBy !== "") return parseGroupBy(groupBy);
  const trials = new Set(index.jobs.map((j) => j.trial));
  const repeats = index.jobs.length > 1 && !trials.has(null) && trials.size > 1;
  return repeats ? DEFAULT_GROUP_BY.filter((k) => k !== "job") : [...DEFAULT_GROUP_BY];
}

/** What groupKeyOf reads of a rollout, from its summary. */
function keyFacts(r: RolloutSummary): RolloutFacts {
  return {
    task: r.task,
    agent: r.agent,
    model: r.model,
    taskDigest: r.taskDigest,
    job: { id: r.job },
  } as unknown as RolloutFacts;
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
  const byId = new Map<string, { key: Record<string, string | null>; members: RolloutSummary[] }>();
  for (const r of index.live()) {
    const { id, key } = groupKeyOf(keyFacts(r), by, r.policyVersion);
    const g = byId.get(id);
    if (g) g.members.push(r);
    else byId.set(id, { key, members: [r] });
  }
  const groups: ViewGroup[] = [];
  for (const [id, g] of byId) {
    const states: MemberState[] = g.members.map((r) => ({
      resultState: r.resultState,
      reward: r.reward,
      calls: r.calls ?? 0,
      okCalls: r.okCalls ?? 0,
    }));
    const settled = settleGroup(states, norm);
    const scored = g.members.map((m) => m.reward).filter((x): x is number => x !== null);
    groups.push({
      urlId: urlIdOf(id),
      id,
      key: g.key,
      members: g.members,
      settled,
      memberReasons: states.map(memberWithheld),
      withheld: settled.withheld,
      zeroSpread: !settled.withheld && scored.length >= 2 && scored.every((x) => x === scored[0]),
    });
  }
  perIndex.set(k, { version: index.version, groups });
  return groups;
}
