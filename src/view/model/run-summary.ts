// The numbers of a run: the same for the runs page, `bench results` and `bench results --json`.

import { UserInputError } from "../../errors.js";
import { NORMALISATIONS, type Normalisation } from "../../jobs-dir/groups/advantage.js";
import { policyVersionKey } from "../../jobs-dir/groups/groups.js";
import type { Rollout } from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import type { GroupByKey } from "../../schemas/train-rows.js";
import { type GroupOptions, groupByFor, groupsOf, type ViewGroup } from "./groups.js";
import { RunIndex } from "./run-index.js";
import { CATEGORIES, type Category, categoryOf, durationSecOf, usageOf } from "./summary.js";

export interface Totals {
  rollouts: number;
  /** Rollouts a trainer learns from: the verifier's reward, or 0 where the policy broke its own run. */
  scored: number;
  mean_reward: number | null;
  /** Rollouts attributed `mask`: left out of the mean (shown beside it, with the share). */
  masked: number;
  outcomes: Record<Category, number>;
  tokens: { input: number; output: number; total: number };
  cost_usd: number | null;
  /** First start to last finish of the rollouts, in seconds. */
  wall_time_sec: number | null;
}

export interface JobLine extends Totals {
  id: string;
  path: string;
  trial: string | null;
  replaced: number;
}

export interface MemberLine {
  rollout: string;
  name: string;
  job: string;
  reward: number | null;
  advantage: number | null;
  outcome: string | null;
  outcome_category: string | null;
  attribution: string | null;
  attribution_reason: string | null;
  category: Category;
  policy_version: string | null;
  duration_sec: number | null;
  withheld_reason: string | null;
}

export interface GroupLine {
  id: string;
  url_id: string;
  key: Record<string, string | null>;
  rollouts: number;
  scored: number;
  mean: number | null;
  std: number | null;
  withheld: string | null;
  zero_spread: boolean;
  members: MemberLine[];
}

export interface RunSummary {
  jobs_dir: string;
  group_by: GroupByKey[];
  advantage: Normalisation;
  run: Totals & { replaced: number; groups: number; withheld_groups: number; zero_spread_groups: number };
  jobs: JobLine[];
  groups: GroupLine[];
}

export function totalsOf(rs: readonly Rollout[]): Totals {
  const outcomes = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  let sum = 0;
  let scored = 0;
  let masked = 0;
  const tokens = { input: 0, output: 0, total: 0 };
  let cost: number | null = null;
  let first: number | null = null;
  let last: number | null = null;
  for (const r of rs) {
    outcomes[categoryOf(r)]++;
    if (r.reward !== null) {
      sum += r.reward;
      scored++;
    }
    if (r.outcome.attribution === "mask") masked++;
    const u = usageOf(r);
    tokens.input += u.input ?? 0;
    tokens.output += u.output ?? 0;
    tokens.total += u.total ?? (u.input ?? 0) + (u.output ?? 0);
    if (u.costUsd !== null) cost = (cost ?? 0) + u.costUsd;
    const s = r.startedAt ? Date.parse(r.startedAt) : Number.NaN;
    const f = r.finishedAt ? Date.parse(r.finishedAt) : Number.NaN;
    if (Number.isFinite(s)) first = first === null ? s : Math.min(first, s);
    if (Number.isFinite(f)) last = last === null ? f : Math.max(last, f);
  }
  return {
    rollouts: rs.length,
    scored,
    mean_reward: scored > 0 ? sum / scored : null,
    masked,
    outcomes,
    tokens,
    cost_usd: cost,
    wall_time_sec: first !== null && last !== null && last >= first ? (last - first) / 1000 : null,
  };
}

export function memberLines(g: ViewGroup): MemberLine[] {
  return g.members.map((r, i) => ({
    rollout: r.relPath,
    name: r.name,
    job: r.job.id,
    reward: r.reward,
    advantage: g.settled.advantages[i] ?? null,
    outcome: r.outcome.scoreOutcome,
    outcome_category: r.outcome.category,
    attribution: r.outcome.attribution,
    attribution_reason: r.outcome.attributionReason,
    category: categoryOf(r),
    policy_version: policyVersionKey(r),
    duration_sec: durationSecOf(r),
    withheld_reason: g.memberReasons[i] ?? null,
  }));
}

export function groupLine(g: ViewGroup): GroupLine {
  return {
    id: g.id,
    url_id: g.urlId,
    key: g.key,
    rollouts: g.settled.rollouts,
    scored: g.settled.scored,
    mean: g.settled.mean,
    std: g.settled.std,
    withheld: g.withheld,
    zero_spread: g.zeroSpread,
    members: memberLines(g),
  };
}

export function assertAdvantage(value: string | undefined): Normalisation {
  const v = value ?? "grpo";
  if (!NORMALISATIONS.includes(v as Normalisation))
    throw new UserInputError(`${opt("advantage")}: use grpo or loo, not "${v}".`);
  return v as Normalisation;
}

export function summaryFromIndex(index: RunIndex, opts: GroupOptions = {}): RunSummary {
  const by = groupByFor(opts.groupBy);
  const norm = opts.advantage ?? "grpo";
  const groups = groupsOf(index, by, norm);
  const live = index.live();
  const jobs: JobLine[] = index.jobs.map((j) => {
    const rs = j.rollouts.filter((p) => !index.replaced.has(p)).map((p) => index.rollouts.get(p));
    return {
      id: j.id,
      path: j.path,
      trial: j.repeat,
      replaced: j.rollouts.length - rs.length,
      ...totalsOf(rs.filter((r): r is Rollout => r !== undefined)),
    };
  });
  return {
    jobs_dir: index.root,
    group_by: by,
    advantage: norm,
    run: {
      ...totalsOf(live),
      replaced: index.replaced.size,
      groups: groups.length,
      withheld_groups: groups.filter((g) => g.withheld).length,
      zero_spread_groups: groups.filter((g) => g.zeroSpread).length,
    },
    jobs,
    groups: groups.map(groupLine),
  };
}

/** The numbers `bench results --json` prints. */
export async function loadRunSummary(
  jobsDir: string,
  opts: { groupBy?: string | readonly string[]; advantage?: Normalisation | string } = {},
): Promise<RunSummary> {
  const advantage = assertAdvantage(opts.advantage);
  const index = await RunIndex.open(jobsDir);
  return summaryFromIndex(index, { groupBy: opts.groupBy, advantage });
}
