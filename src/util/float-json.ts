// JSON with floats where upstream writes floats. Python's json writes a float reward of one as
// `1.0`; JSON.stringify writes `1`, and a column of 0/1 rewards then loads as int64 in pandas, Arrow
// and HF datasets, which refuse to concatenate it with float shards. So the numbers under the
// fields named here are written with a decimal point; every other number, and every other value,
// is written exactly as JSON.stringify writes it (key order kept, undefined left out of objects and
// null in arrays, toJSON honoured). Node 20 has no JSON.rawJSON, hence a small serializer.

/**
 * Fields whose numbers are floats, at any depth: every number inside such a field is (the values
 * of a `rewards` map, the items of a logprobs list). Integers (rollouts, scored, std_ddof,
 * exchange_index, token ids, counts) are in none of them.
 */
export const FLOAT_FIELDS: ReadonlySet<string> = new Set([
  "reward",
  "rewards",
  "reward_vector",
  "score",
  "advantage",
  "advantage_vector",
  "mean",
  "std",
  "eps",
  "value",
  "margin",
  "chosen_reward",
  "rejected_reward",
  "logprobs",
  "completion_logprobs",
  "group_mean",
  "group_std",
]);

/**
 * Subtrees that are data the rollout produced (messages, tool schemas, usage), or maps keyed by
 * field names (`unavailable`: {"logprobs": 3} counts calls): written as they are, so a tool
 * argument `{"reward": 1}` stays the agent's `1`.
 */
export const VERBATIM_FIELDS: ReadonlySet<string> = new Set([
  "messages",
  "prompt",
  "completion",
  "chosen",
  "rejected",
  "prefix",
  "continuation",
  "tools",
  "tool_defs",
  "token_usage",
  "arguments",
  "content",
  "unavailable",
]);

export interface FloatJsonOptions {
  /** Override FLOAT_FIELDS (result.json and summary.json name their own). */
  floats?: ReadonlySet<string>;
  verbatim?: ReadonlySet<string>;
  /** Spaces per level, as JSON.stringify's third argument; 0 or absent: one line. */
  indent?: number;
  /** Python's sort_keys=True: object keys in code-point order. */
  sortKeys?: boolean;
  /** With indent: the nesting level the value sits at, for a value spliced into a larger document. */
  depth?: number;
}

/** A float as Python's json writes it: `1.0`, `-0.0`, `0.5`, `1e+21`; not finite: null. */
export function floatText(n: number): string {
  if (!Number.isFinite(n)) return "null";
  if (Object.is(n, -0)) return "-0.0";
  const s = String(n);
  return Number.isInteger(n) && !s.includes("e") ? `${s}.0` : s;
}

/** How the numbers under a key are written: as floats, as they are, or as the key's parent says. */
export type FieldMode = "plain" | "float" | "verbatim";

/** The mode of a member `key` inside a value whose mode is `parent`: float and verbatim are inherited. */
export function fieldMode(
  key: string,
  parent: FieldMode,
  floats: ReadonlySet<string> = FLOAT_FIELDS,
  verbatim: ReadonlySet<string> = VERBATIM_FIELDS,
): FieldMode {
  if (parent !== "plain") return parent;
  if (verbatim.has(key)) return "verbatim";
  return floats.has(key) ? "float" : "plain";
}

/** A finite number as it is written in `mode`: `1.0` in a float field, `1` elsewhere. */
export function numberText(n: number, mode: FieldMode): string {
  return mode === "float" ? floatText(n) : JSON.stringify(n);
}

type Mode = FieldMode;

export function floatJson(value: unknown, opts: FloatJsonOptions = {}): string {
  const floats = opts.floats ?? FLOAT_FIELDS;
  const verbatim = opts.verbatim ?? VERBATIM_FIELDS;
  const unit = opts.indent ? " ".repeat(opts.indent) : "";

  const modeOf = (key: string, parent: Mode): Mode => fieldMode(key, parent, floats, verbatim);

  // undefined: leave the member out (JSON.stringify's rule for undefined, functions, symbols).
  const write = (raw: unknown, key: string, mode: Mode, indent: string): string | undefined => {
    let v = raw;
    if (typeof v === "object" && v !== null && typeof (v as { toJSON?: unknown }).toJSON === "function")
      v = (v as { toJSON: (k: string) => unknown }).toJSON(key);
    if (v === null) return "null";
    if (typeof v === "number") return numberText(v, mode);
    if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
    if (typeof v === "bigint") return JSON.stringify(v); // throws, as JSON.stringify does
    if (typeof v !== "object") return undefined;
    if (v instanceof Number || v instanceof String || v instanceof Boolean)
      return write(v.valueOf(), key, mode, indent);
    const inner = indent + unit;
    const open = unit ? `\n${inner}` : "";
    const close = unit ? `\n${indent}` : "";
    const sep = unit ? `,\n${inner}` : ",";
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      const items = v.map((item, i) => write(item, String(i), mode, inner) ?? "null");
      return `[${open}${items.join(sep)}${close}]`;
    }
    const keys = Object.keys(v);
    if (opts.sortKeys) keys.sort();
    const members: string[] = [];
    for (const k of keys) {
      const text = write((v as Record<string, unknown>)[k], k, modeOf(k, mode), inner);
      if (text !== undefined) members.push(`${JSON.stringify(k)}:${unit ? " " : ""}${text}`);
    }
    if (members.length === 0) return "{}";
    return `{${open}${members.join(sep)}${close}}`;
  };

  const text = write(value, "", "plain", unit.repeat(opts.depth ?? 0));
  if (text === undefined) throw new TypeError("floatJson: nothing to write (the value is undefined)");
  return text;
}
