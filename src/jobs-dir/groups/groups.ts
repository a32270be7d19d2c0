// The one group computation behind convert, stream, results, the viewer and the library: keys, the
// seed's withholding rules, and advantages over the scored members.
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import {
  DEFAULT_GROUP_BY,
  GROUP_BY_KEYS,
  type GroupBlock,
  type GroupByKey,
  MIX_KEYS,
  type MixKey,
  UPSTREAM_GROUP_BY,
  WITHHELD_REASONS,
  type WithheldReason,
} from "../../schemas/train-rows.js";
import type { Rollout } from "../rollout.js";
import { baselineOf, EPS, FORMULAS, type Normalisation, STD_DDOF } from "./advantage.js";

export function parseGroupBy(value: string | readonly string[], flag = opt("groupBy")): GroupByKey[] {
  const keys = (typeof value === "string" ? value.split(",") : [...value]).map((k) => k.trim());
  const allowed: readonly string[] = GROUP_BY_KEYS;
  for (const k of keys) {
    if (k === "")
      throw new UserInputError(
        `${flag}: empty key in "${String(value)}"; use a comma-separated list such as task,agent,model.`,
      );
    if (!allowed.includes(k)) {
      throw new UserInputError(
        `${flag}: unknown key "${k}"; use some of ${GROUP_BY_KEYS.join(", ")} (for example task,agent,model).`,
      );
    }
  }
  if (new Set(keys).size !== keys.length)
    throw new UserInputError(`${flag}: a key appears twice in "${keys.join(",")}".`);
  return keys as GroupByKey[];
}

export interface GroupKey {
  id: string;
  key: Record<string, string | null>;
  /** The keys used: `by`, or upstream's default for a rollout whose run nothing names (keysFor). */
  by: readonly GroupByKey[];
}

type Keyed = Pick<Rollout, "task" | "agent" | "model" | "taskDigest" | "job" | "run" | "sampling">;

const isDefault = (by: readonly GroupByKey[]): boolean =>
  by.length === DEFAULT_GROUP_BY.length && by.every((k, i) => k === DEFAULT_GROUP_BY[i]);

/**
 * The keys a rollout is grouped by: `by`, except that under the default a rollout whose run nothing
 * names (upstream's folders record none, and their layout did not tell) is grouped as upstream
 * groups it, so upstream's folders keep upstream's groups and ids.
 */
export function keysFor(r: Pick<Keyed, "run">, by: readonly GroupByKey[]): readonly GroupByKey[] {
  return r.run === null && isDefault(by) ? UPSTREAM_GROUP_BY : by;
}

/** A rollout's value of each key; an explicit `run` key falls back to its job where nothing names the run. */
function keyValues(r: Keyed, policyVersion: string | null): Record<GroupByKey, string | null> {
  return {
    task: r.task,
    agent: r.agent,
    model: r.model,
    task_digest: r.taskDigest,
    job: r.job.id,
    policy_version: policyVersion,
    run: r.run ?? `job:${r.job.id}`,
    sampling: r.sampling,
  };
}

export function groupKeyOf(
  r: Keyed,
  asked: readonly GroupByKey[],
  policyVersion: string | null = null,
): GroupKey {
  const by = keysFor(r, asked);
  const values = keyValues(r, policyVersion);
  const key: Record<string, string | null> = {};
  for (const k of by) key[k] = values[k];
  return { id: by.map((k) => `${k}=${values[k] ?? "null"}`).join("|"), key, by };
}

/**
 * The policy_version key: the run's stamp where the result records its group identity (null when the
 * run stamped none: what a server reports never splits a run's group); otherwise the result's own
 * field, else every version its calls name, joined (upstream's folders).
 */
export function policyVersionKey(
  r: Pick<Rollout, "policyVersion" | "calls"> & Partial<Pick<Rollout, "policyVersionStamped">>,
): string | null {
  if (r.policyVersionStamped || r.policyVersion) return r.policyVersion;
  const named = r.calls?.policyVersions ?? [];
  return named.length > 0 ? [...named].sort().join(",") : null;
}

/** What the rules read of a member; its calls are null until they were read (withCalls). */
export type Member = Pick<Rollout, "resultState" | "reward" | "calls">;

export function memberWithheld(m: Member): WithheldReason | null {
  if (m.resultState === "missing") return "missing_result";
  if (m.resultState === "truncated") return "truncated_result";
  if (m.reward === null) return "unscored_member";
  if (m.calls?.total === 0) return "no_model_calls";
  if (m.calls && m.calls.ok === 0) return "all_calls_failed";
  return null;
}

export interface Settled {
  withheld: WithheldReason | null;
  rollouts: number;
  scored: number;
  mean: number | null;
  std: number | null;
  advantages: Array<number | null>;
  inBaseline: boolean[];
  excluded: Array<"unscored" | "single_scored_rollout" | undefined>;
}

/** A group withheld whole has no advantages and no baseline; otherwise every scored member is in it. */
export function settleGroup(members: readonly Member[], normalisation: Normalisation): Settled {
  const reasons = members.map(memberWithheld);
  const withheld = WITHHELD_REASONS.find((r) => reasons.includes(r)) ?? null;
  const scoredRewards = members.map((m) => m.reward).filter((r): r is number => r !== null);
  const base: Settled = {
    withheld,
    rollouts: members.length,
    scored: scoredRewards.length,
    mean: null,
    std: null,
    advantages: members.map(() => null),
    inBaseline: members.map(() => false),
    excluded: members.map((m) => (m.reward === null ? "unscored" : undefined)),
  };
  if (withheld) return base;
  const { mean, std, advantages } = baselineOf(scoredRewards, normalisation);
  const single = scoredRewards.length < 2;
  return {
    ...base,
    mean,
    std,
    advantages,
    inBaseline: members.map(() => true),
    excluded: members.map(() => (single ? "single_scored_rollout" : undefined)),
  };
}

/**
 * The block a row carries, in upstream's field order (the seed's keys with upstream's `by`, `key`
 * and `std_ddof` where upstream puts them); `error` only for a rollout that ended with one.
 */
export function groupBlock(
  group: GroupKey & { by: readonly GroupByKey[] },
  s: Settled,
  normalisation: Normalisation,
  member: { error: string | null; excluded?: "unscored" | "single_scored_rollout" },
): GroupBlock {
  const block: GroupBlock = {
    id: group.id,
    by: [...group.by],
    key: { ...group.key },
    normalisation,
    formula: FORMULAS[normalisation],
    rollouts: s.rollouts,
    scored: s.scored,
    mean: s.mean,
    std: s.std,
    std_ddof: STD_DDOF,
    eps: EPS,
  };
  if (member.error) block.error = member.error;
  if (member.excluded === "single_scored_rollout") block.excluded = "single_scored_rollout";
  return block;
}

/**
 * `bench run --trials N` writes each repeat as a job of its own (trial-01, trial-02, ...), so with
 * `job` in --group-by (the default, as upstream's) every group holds one rollout and none gets an
 * advantage. This notices exactly that case: every group has one rollout, and leaving `job` out
 * would put some of them together.
 */
export class JobSplitCheck {
  private readonly rest: GroupByKey[] | null;
  private readonly sizes = new Map<string, number>();
  private readonly withoutJob = new Set<string>();

  constructor(by: readonly GroupByKey[]) {
    this.rest = by.includes("job") ? by.filter((k) => k !== "job") : null;
  }

  add(r: Rollout, id: string, policyVersion: string | null): void {
    if (!this.rest) return;
    this.sizes.set(id, (this.sizes.get(id) ?? 0) + 1);
    this.withoutJob.add(this.rest.length > 0 ? groupKeyOf(r, this.rest, policyVersion).id : "");
  }

  /** The one line to print, or null when job in --group-by is not what keeps the groups at one. */
  warning(): string | null {
    if (!this.rest || this.sizes.size < 2) return null;
    for (const n of this.sizes.values()) if (n !== 1) return null;
    if (this.withoutJob.size === this.sizes.size) return null;
    const fix = this.rest.length > 0 ? this.rest.join(",") : "task,agent,model";
    return (
      "every group has one rollout, so none gets an advantage: each trial-NN is a job of its own. " +
      `Leave job out of ${opt("groupBy")} (${opt("groupBy", fix)}) to group a task's repeats across its trial-NN jobs.`
    );
  }
}

/**
 * What a group mixes that the default grouping keeps apart (task versions, policy versions,
 * sampling): only an explicit --group-by that leaves one of them out can mix it.
 */
export class MixCheck {
  private readonly watched: MixKey[];
  private readonly seen = new Map<string, Map<MixKey, Set<string>>>();

  constructor(by: readonly GroupByKey[]) {
    this.watched = MIX_KEYS.filter((k) => !by.includes(k));
  }

  add(groupId: string, r: Keyed, policyVersion: string | null): void {
    if (this.watched.length === 0) return;
    const values = keyValues(r, policyVersion);
    let perKey = this.seen.get(groupId);
    if (!perKey) {
      perKey = new Map();
      this.seen.set(groupId, perKey);
    }
    for (const k of this.watched) {
      const set = perKey.get(k) ?? new Set<string>();
      set.add(values[k] ?? "null");
      perKey.set(k, set);
    }
  }

  /** The keys whose values differ among the group's members, in MIX_KEYS order. */
  mixed(groupId: string): MixKey[] {
    const perKey = this.seen.get(groupId);
    if (!perKey) return [];
    return this.watched.filter((k) => (perKey.get(k)?.size ?? 0) > 1);
  }

  /** The summary's clause: how many groups mix what, or null when none does. */
  summary(): string | null {
    const counts = new Map<MixKey, number>();
    for (const id of this.seen.keys())
      for (const k of this.mixed(id)) counts.set(k, (counts.get(k) ?? 0) + 1);
    if (counts.size === 0) return null;
    const parts = [...counts].map(([k, n]) => `${n} mix ${MIX_NAMES[k]}`);
    return `${parts.join(", ")} (the default grouping keeps them apart: leave ${opt("groupBy")} out)`;
  }
}

const MIX_NAMES: Record<MixKey, string> = {
  task_digest: "task versions",
  policy_version: "policy versions",
  sampling: "sampling settings",
};

/** Rollouts whose run nothing names, grouped under the default: one line, or null. */
export function unnamedRunNote(count: number): string | null {
  if (count === 0) return null;
  return `${count} rollout(s) record no run (written by upstream) and their folders do not tell which: grouped as upstream groups them, by ${UPSTREAM_GROUP_BY.join(",")}.`;
}
