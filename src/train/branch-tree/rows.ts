// The rows of a group's branch tree. A child row is one rollout seen from one fork above it:
// the shared prefix, the rollout's own continuation, its reward, the fork's value (the mean
// reward below the fork) and advantage = reward - value. A pair row (--pairs) is two rollouts
// that part at a fork with different rewards: the shared prompt, the better continuation as
// chosen and the worse as rejected.
import type { BranchChildRow, BranchPairRow } from "../../schemas/train-branch-tree.js";
import type { ChatMessage, ToolDef } from "../../schemas/train-rows.js";
import type { Fork } from "./tree.js";

export const BRANCH_SCHEMA_VERSION = 2 as const;

/** One rollout in a tree: what its rows are made of. */
export interface Member {
  messages: ChatMessage[];
  tools: ToolDef[];
  reward: number;
  rollout: string;
  /** The rollout folder as the user would write it. */
  session: string;
  sourcePath: string;
  task: string;
  job: string;
  agent: string | null;
  model: string | null;
  status: BranchChildRow["status"];
}

export type ChildRow = BranchChildRow;
export type PairRow = BranchPairRow;

function calledTools(messages: readonly ChatMessage[]): string[] {
  const names: string[] = [];
  for (const m of messages)
    for (const c of m.tool_calls ?? []) if (!names.includes(c.function.name)) names.push(c.function.name);
  return names;
}

/**
 * The rejected continuation answers tool calls made in its own prefix, whose ids its agent drew;
 * the pair's prompt is the chosen rollout's prefix, so those answers are renamed to its ids.
 */
function renamedToPrompt(prompt: readonly ChatMessage[], own: readonly ChatMessage[], rest: ChatMessage[]) {
  const ids = new Map<string, string>();
  prompt.forEach((m, i) => {
    (own[i]?.tool_calls ?? []).forEach((c, j) => {
      const to = m.tool_calls?.[j]?.id;
      if (to !== undefined && to !== c.id) ids.set(c.id, to);
    });
  });
  if (ids.size === 0) return rest;
  return rest.map((m) =>
    m.tool_call_id !== undefined && ids.has(m.tool_call_id)
      ? { ...m, tool_call_id: ids.get(m.tool_call_id) }
      : m,
  );
}

export interface TreeRows {
  children: ChildRow[];
  pairs: PairRow[];
}

export function rowsOfTree(
  group: string,
  members: readonly Member[],
  forks: readonly Fork[],
  forkIds: readonly string[],
  opts: { pairs: boolean; pairsAnyRequest: boolean; minReward?: number },
): TreeRows {
  const out: TreeRows = { children: [], pairs: [] };
  for (const f of forks) {
    const forkId = forkIds[f.index] as string;
    const parent = f.parent === null ? null : (forkIds[f.parent] as string);
    for (const i of f.members) {
      const m = members[i] as Member;
      const prefix = m.messages.slice(0, f.prefixLength);
      const continuation = m.messages.slice(f.prefixLength);
      // A rollout that stopped at the fork took part in its value but has nothing to learn from.
      if (continuation.length === 0) continue;
      if (opts.minReward !== undefined && m.reward < opts.minReward) continue;
      out.children.push({
        kind: "branch_child",
        schema_version: BRANCH_SCHEMA_VERSION,
        prefix,
        continuation,
        messages: m.messages,
        tools: m.tools,
        label: m.rollout,
        request: prefix.filter((x) => x.role === "assistant").length,
        status: m.status,
        reward: m.reward,
        value: f.value,
        value_stderr: f.valueStderr,
        advantage: m.reward - f.value,
        agent: m.agent,
        model: m.model,
        depth: f.depth,
        fork_id: forkId,
        fork_kind: "fork",
        parent_node: parent,
        session: m.session,
        prefix_complete: true,
        prefix_source: "llm_trajectory",
        tool_names: calledTools(continuation),
        task_name: m.task,
        job: m.job,
        group,
        source_path: m.sourcePath,
      });
    }
    if (opts.pairs) out.pairs.push(...pairsAt(f, forkId, group, members, opts.pairsAnyRequest));
  }
  return out;
}

/** Each two rollouts pair once, at the fork where they part. */
function pairsAt(f: Fork, forkId: string, group: string, members: readonly Member[], anyRequest: boolean) {
  const pairs: PairRow[] = [];
  for (const [p, partA] of f.parts.entries())
    for (const partB of f.parts.slice(p + 1))
      for (const a of partA)
        for (const b of partB) {
          const [hi, lo] = [members[a], members[b]].sort(
            (x, y) => (y as Member).reward - (x as Member).reward,
          ) as [Member, Member];
          if (hi.reward === lo.reward) continue;
          const chosen = hi.messages.slice(f.prefixLength);
          const rejected = lo.messages.slice(f.prefixLength);
          if (chosen.length === 0 || rejected.length === 0) continue;
          // Both answer the same request when the model spoke first after the prefix in both;
          // a differing tool result or user turn means the requests already differed.
          const sameRequest = chosen[0]?.role === "assistant" && rejected[0]?.role === "assistant";
          if (!sameRequest && !anyRequest) continue;
          const prompt = hi.messages.slice(0, f.prefixLength);
          pairs.push({
            kind: "branch_pair",
            schema_version: BRANCH_SCHEMA_VERSION,
            prompt,
            chosen,
            rejected: renamedToPrompt(prompt, lo.messages, rejected),
            tools: hi.tools,
            chosen_reward: hi.reward,
            rejected_reward: lo.reward,
            margin: hi.reward - lo.reward,
            same_request: sameRequest,
            value: f.value,
            depth: f.depth,
            fork_id: forkId,
            task_name: hi.task,
            group,
            chosen_session: hi.session,
            rejected_session: lo.session,
          });
        }
  return pairs;
}
