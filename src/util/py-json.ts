// JSON as Python's json.dumps prints it (", " and ": ", non-ASCII escaped as \uXXXX unless
// ensureAscii is false). Uses: the seed's validate line, byte for byte, is json.dumps(sort_keys=True):
// {"ok": true, "rows": 4, "rows_with_tool_calls": 4}; a tool call's arguments that came as an
// object (Anthropic's tool_use input) become the string upstream writes, so a chat template renders
// the same tokens from our rows as from upstream's; and a row `bench train run sft` rewrites, where
// `floats` keeps a float reward a float (`1.0`: JSON.parse has already made it the number 1).
import { type FieldMode, fieldMode, numberText } from "./float-json.js";

export interface PyJsonOptions {
  /** Python's sort_keys; true unless told. */
  sortKeys?: boolean;
  /** Python's ensure_ascii; true unless told. */
  ensureAscii?: boolean;
  /** Fields whose numbers are floats (float-json's FLOAT_FIELDS); none unless told. */
  floats?: ReadonlySet<string>;
  /** Subtrees written as they are even under a float field's name (float-json's VERBATIM_FIELDS). */
  verbatim?: ReadonlySet<string>;
}

const NONE: ReadonlySet<string> = new Set();

export function pyJson(value: unknown, opts: PyJsonOptions = {}): string {
  const sortKeys = opts.sortKeys ?? true;
  const str = opts.ensureAscii === false ? (s: string) => JSON.stringify(s) : asciiJson;
  const floats = opts.floats ?? NONE;
  const verbatim = opts.verbatim ?? NONE;
  const dump = (v: unknown, mode: FieldMode): string => {
    if (v === null || v === undefined) return "null";
    if (Array.isArray(v)) return `[${v.map((x) => dump(x, mode)).join(", ")}]`;
    if (typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, x]) => `${str(k)}: ${dump(x, fieldMode(k, mode, floats, verbatim))}`).join(", ")}}`;
    }
    if (typeof v === "number" && !Number.isFinite(v))
      return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    if (typeof v === "number") return numberText(v, mode);
    return typeof v === "string" ? str(v) : JSON.stringify(v);
  };
  return dump(value, "plain");
}

/** A JSON string literal with every non-ASCII code unit escaped, as Python's ensure_ascii does. */
function asciiJson(s: string): string {
  return JSON.stringify(s).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
