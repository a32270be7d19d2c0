// `bench train convert --format branch-tree`: the rollouts of each group (--group-by, as for
// advantages) become one branch tree (see tree.ts); its forks give child rows and, with --pairs,
// preference pairs. A rollout enters its tree when it is final, scored and has a conversation:
// the last successful call the agent itself made (helper calls such as titles are left out).
import { createHash } from "node:crypto";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import { conversationOf } from "../../jobs-dir/conversation/index.js";
import { callPurposeOf, isSuccessful, readExchanges } from "../../jobs-dir/exchange.js";
import { groupKeyOf, parseGroupBy } from "../../jobs-dir/groups/groups.js";
import { assertRollouts, type Rollout, scanJobs, TRAJECTORY } from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import { DEFAULT_GROUP_BY, type GroupByKey } from "../../schemas/train-rows.js";
import { floatJson } from "../../util/float-json.js";
import { writeFileAtomic } from "../../util/fs.js";
import { RowWriter } from "../convert/row-writer.js";
import { PRIMARY } from "../convert/rows.js";
import { type Member, rowsOfTree } from "./rows.js";
import { forksOf, messageKey } from "./tree.js";

export interface BranchTreeOptions {
  jobs: string;
  out: string;
  groupBy?: string | readonly string[];
  pairs?: boolean;
  pairsAnyRequest?: boolean;
  includeOracle?: boolean;
  minReward?: number;
  expectedRows?: number;
  manifest?: string;
  onWarning?: (message: string) => void;
}

export type BranchSkip =
  | "skipped_retried"
  | "skipped_no_result"
  | "skipped_truncated_result"
  | "skipped_unscored"
  | "skipped_oracle"
  | "skipped_no_trajectory"
  | "skipped_no_assistant";

export interface BranchTreeResult {
  rows: number;
  rollouts: number;
  childRows: number;
  pairRows: number;
  trees: number;
  forks: number;
  /** Groups whose conversations never parted (one rollout, or all the same): no rows. */
  groupsWithoutFork: number;
  /** Of those, the groups of a single rollout (with `job` in --group-by: each trial-NN job alone). */
  singleRolloutGroups: number;
  groupBy: string[];
  skipped: Partial<Record<BranchSkip, number>>;
}

/** The oracle runs the task's own solution: its rollouts are not samples of the policy. */
function isOracle(r: Rollout): boolean {
  return r.agent === "oracle";
}

async function memberOf(r: Rollout, skip: (k: BranchSkip) => void, includeOracle: boolean) {
  if (r.resultState === "missing") return skip("skipped_no_result");
  if (r.resultState === "truncated") return skip("skipped_truncated_result");
  if (r.reward === null) return skip("skipped_unscored");
  if (isOracle(r) && !includeOracle) return skip("skipped_oracle");
  const display = path.join(r.displayDir, TRAJECTORY);
  const exchanges = (await readExchanges(path.join(r.dir, TRAJECTORY), display)) ?? [];
  if (exchanges.length === 0) return skip("skipped_no_trajectory");
  const last = exchanges.filter((ex) => isSuccessful(ex) && PRIMARY.has(callPurposeOf(ex, r.agent))).at(-1);
  const conv = last ? conversationOf(last) : null;
  if (!conv?.assistant) return skip("skipped_no_assistant");
  const member: Member = {
    messages: [...conv.messages, conv.assistant],
    tools: conv.tools,
    reward: r.reward,
    rollout: r.name,
    session: r.displayDir,
    sourcePath: display,
    task: r.task,
    job: r.job.id,
    agent: r.agent,
    model: r.model,
    // Upstream's outcome: passed, failed, errored, verifier_errored.
    status: r.outcome.scoreOutcome,
  };
  return member;
}

function forkId(group: string, prefix: readonly string[]): string {
  return createHash("sha256").update(group).update("\n").update(prefix.join("\n")).digest("hex").slice(0, 16);
}

export async function convertBranchTree(opts: BranchTreeOptions): Promise<BranchTreeResult> {
  const by = opts.groupBy === undefined ? [...DEFAULT_GROUP_BY] : parseGroupBy(opts.groupBy);
  const res: BranchTreeResult = {
    rows: 0,
    rollouts: 0,
    childRows: 0,
    pairRows: 0,
    trees: 0,
    forks: 0,
    groupsWithoutFork: 0,
    singleRolloutGroups: 0,
    groupBy: by,
    skipped: {},
  };
  const groups = await membersByGroup(opts, by, res);
  await writeTrees(groups, opts, res);
  if (opts.manifest) {
    const manifest = {
      format: "branch-tree",
      schema_version: 2,
      group_by: by,
      rollouts: res.rollouts,
      trees: res.trees,
      forks: res.forks,
      groups_without_fork: res.groupsWithoutFork,
      child_rows: res.childRows,
      pair_rows: res.pairRows,
      skipped: res.skipped,
    };
    await writeFileAtomic(opts.manifest, `${floatJson(manifest, { indent: 2, sortKeys: true })}\n`);
  }
  return res;
}

/** Every rollout that can enter a tree, by its group; the others counted by why in `res.skipped`. */
async function membersByGroup(
  opts: BranchTreeOptions,
  by: readonly GroupByKey[],
  res: BranchTreeResult,
): Promise<Map<string, Member[]>> {
  const scan = await scanJobs(opts.jobs);
  assertRollouts(scan);
  const skip = (k: BranchSkip) => {
    res.skipped[k] = (res.skipped[k] ?? 0) + 1;
  };
  const groups = new Map<string, Member[]>();
  const out = path.resolve(opts.out);
  for await (const j of scan.eachJob()) {
    for (const r of j.rollouts) {
      if (out === r.dir || out.startsWith(r.dir + path.sep))
        throw new UserInputError(
          `${opt("out", opts.out)} is inside the rollout folder ${r.displayDir}; write it somewhere else, for example train/tree.jsonl.`,
        );
      if (r.replaced) {
        skip("skipped_retried");
        continue;
      }
      if (r.resultProblem) opts.onWarning?.(`${r.displayDir}: ${r.resultProblem}`);
      res.rollouts++;
      const m = await memberOf(r, skip, opts.includeOracle === true);
      if (!m) continue;
      const { id } = groupKeyOf(r, by);
      const g = groups.get(id);
      if (g) g.push(m);
      else groups.set(id, [m]);
    }
  }
  return groups;
}

/** Each group's tree as rows, all or nothing: the file is replaced only when every row is written. */
async function writeTrees(
  groups: Map<string, Member[]>,
  opts: BranchTreeOptions,
  res: BranchTreeResult,
): Promise<void> {
  const writer = await RowWriter.open(opts.out);
  try {
    for (const [group, members] of groups) {
      const keyed = members.map((m) => ({ keys: m.messages.map(messageKey), reward: m.reward }));
      const forks = forksOf(keyed);
      if (forks.length === 0) {
        res.groupsWithoutFork++;
        if (members.length === 1) res.singleRolloutGroups++;
        continue;
      }
      res.trees++;
      res.forks += forks.length;
      const ids = forks.map((f) =>
        forkId(group, (keyed[f.members[0] as number]?.keys ?? []).slice(0, f.prefixLength)),
      );
      const rows = rowsOfTree(group, members, forks, ids, {
        pairs: opts.pairs === true,
        pairsAnyRequest: opts.pairsAnyRequest === true,
        minReward: opts.minReward,
      });
      for (const row of [...rows.children, ...rows.pairs]) await writer.write(row);
      res.childRows += rows.children.length;
      res.pairRows += rows.pairs.length;
    }
    res.rows = res.childRows + res.pairRows;
    if (opts.expectedRows !== undefined && res.rows !== opts.expectedRows)
      throw new UserInputError(
        `${opt("expectedRows", opts.expectedRows)}: the conversion gives ${res.rows} row(s); nothing was written.`,
      );
    await writer.commit();
  } catch (err) {
    await writer.abort();
    throw err;
  }
}
