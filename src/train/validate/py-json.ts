// JSON as Python's json.dumps prints it (", " and ": ", non-ASCII escaped as \uXXXX). Two uses:
// the seed's validate line, byte for byte, is json.dumps(sort_keys=True):
// {"ok": true, "rows": 4, "rows_with_tool_calls": 4}; and a tool call's arguments that came as an
// object (Anthropic's tool_use input) become the string upstream writes, so a chat template renders
// the same tokens from our rows as from upstream's.
export function pyJson(value: unknown, opts: { sortKeys?: boolean } = {}): string {
  const sortKeys = opts.sortKeys ?? true;
  const dump = (v: unknown): string => {
    if (v === null || v === undefined) return "null";
    if (Array.isArray(v)) return `[${v.map(dump).join(", ")}]`;
    if (typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, x]) => `${asciiJson(k)}: ${dump(x)}`).join(", ")}}`;
    }
    if (typeof v === "number" && !Number.isFinite(v))
      return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    return typeof v === "string" ? asciiJson(v) : JSON.stringify(v);
  };
  return dump(value);
}

/** A JSON string literal with every non-ASCII code unit escaped, as Python's ensure_ascii does. */
function asciiJson(s: string): string {
  return JSON.stringify(s).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
