// The branch tree of a group: our rollouts do not fork from checkpoints (upstream's `--checkpoints`
// branching), but the rollouts of one task that agree on their first messages are the same thing
// seen from the outside: the shared messages are a state, and each rollout's rest is one sampled
// continuation from it. So the group's conversations are laid in a trie; every node where they
// part (two or more different next messages, or one ending there) is a fork, its value the mean
// reward of the rollouts below it. Pure: no I/O.

export interface Leaf {
  /** One comparison key per message (see messageKey). */
  keys: readonly string[];
  reward: number;
}

export interface Fork {
  /** Index in the list forksOf returns (parents come before their children). */
  index: number;
  /** How many messages the rollouts below share: the prefix of every child. */
  prefixLength: number;
  /** The leaves below, in the order given. */
  members: number[];
  /** The members by the message that follows the prefix; members that end here form their own part. */
  parts: number[][];
  parent: number | null;
  depth: number;
  value: number;
  /** Standard error of the value: sample std (ddof 1) / sqrt(n). */
  valueStderr: number;
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${sortedJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

/**
 * Two messages are the same step when role, text and the calls made (name and arguments) agree;
 * tool-call ids are left out, as every rollout's agent draws its own.
 */
export function messageKey(m: Record<string, unknown>): string {
  const calls = Array.isArray(m.tool_calls)
    ? m.tool_calls.map((c) => {
        const f = (c as { function?: { name?: unknown; arguments?: unknown } }).function ?? {};
        const args = typeof f.arguments === "string" ? parseOr(f.arguments) : f.arguments;
        return { name: f.name, arguments: args };
      })
    : undefined;
  return sortedJson({ role: m.role, content: m.content ?? null, name: m.name, tool_calls: calls });
}

function parseOr(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

const END = "\u0000end";

function meanStderr(rewards: number[]): { value: number; valueStderr: number } {
  const n = rewards.length;
  const value = rewards.reduce((a, b) => a + b, 0) / n;
  const variance = rewards.reduce((a, r) => a + (r - value) ** 2, 0) / (n - 1);
  return { value, valueStderr: Math.sqrt(variance) / Math.sqrt(n) };
}

/** Every fork of the leaves' trie, depth first; none when fewer than two leaves or all the same. */
export function forksOf(leaves: readonly Leaf[]): Fork[] {
  const forks: Fork[] = [];
  const visit = (members: number[], from: number, parent: number | null, depth: number) => {
    if (members.length < 2) return;
    const keysOf = (i: number) => (leaves[i] as Leaf).keys;
    // The longest prefix they all share, from where the parent's fork left off.
    let at = from;
    for (;;) {
      const first = keysOf(members[0] as number)[at];
      if (first === undefined || members.some((i) => keysOf(i)[at] !== first)) break;
      at++;
    }
    const parts = new Map<string, number[]>();
    for (const i of members) {
      const k = keysOf(i)[at] ?? END;
      const part = parts.get(k);
      if (part) part.push(i);
      else parts.set(k, [i]);
    }
    if (parts.size < 2) return; // identical conversations: no choice was made anywhere
    const fork: Fork = {
      index: forks.length,
      prefixLength: at,
      members,
      parts: [...parts.values()],
      parent,
      depth,
      ...meanStderr(members.map((i) => (leaves[i] as Leaf).reward)),
    };
    forks.push(fork);
    for (const [k, part] of parts) if (k !== END) visit(part, at + 1, fork.index, depth + 1);
  };
  visit(
    leaves.map((_, i) => i),
    0,
    null,
    0,
  );
  return forks;
}
