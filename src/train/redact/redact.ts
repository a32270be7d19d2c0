// Redacting text and JSON values with upstream's rules. Values are redacted before they are
// serialized (never the serialized line), so a replacement can never split an escape and corrupt
// the JSON. Object keys are left alone; a string field is redacted with its name in view, since
// `{"x-api-key": "plainvalue"}` is a secret only because of the name.
import { isRecord } from "../../util/jsonl.js";
import { SECRET_PATTERNS, type SecretCategory } from "./patterns.js";

export type SecretCounts = Partial<Record<SecretCategory, number>>;

export interface Redacted<T> {
  value: T;
  /** Replacements made. */
  count: number;
  categories: SecretCounts;
}

function addCounts(into: SecretCounts, from: SecretCounts): void {
  for (const [k, n] of Object.entries(from)) {
    const key = k as SecretCategory;
    into[key] = (into[key] ?? 0) + (n ?? 0);
  }
}

const total = (c: SecretCounts): number => Object.values(c).reduce((a: number, n) => a + (n ?? 0), 0);

/** Every rule over the text, in order. */
export function redactText(text: string): Redacted<string> {
  const categories: SecretCounts = {};
  let out = text;
  for (const { pattern, replacement, category, needs } of SECRET_PATTERNS) {
    if (needs && !needs.test(out)) continue;
    // Most strings hold no secret: a test is cheaper than a replace with a callback.
    pattern.lastIndex = 0;
    if (!pattern.test(out)) continue;
    pattern.lastIndex = 0;
    let n = 0;
    out = out.replace(pattern, (...args) => {
      n++;
      // `$1` is the carrier's kept name and separator (args[1]); families have no group.
      return replacement.replace("$1", typeof args[1] === "string" ? args[1] : "");
    });
    if (n > 0) categories[category] = (categories[category] ?? 0) + n;
  }
  return { value: out, count: total(categories), categories };
}

/** JSON as Python's json.dumps writes it: `, ` and `: `, non-ASCII as \uXXXX (upstream's probe and arguments). */
export function pythonJson(value: unknown): string {
  const ascii = (s: string) =>
    JSON.stringify(s).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
  if (typeof value === "string") return ascii(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (isRecord(value))
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${ascii(k)}: ${pythonJson(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value) ?? "null";
}

/**
 * A string field, redacted inside a one-field object so the carriers that need the name see it.
 * When that probe cannot be read back, the bare value is redacted (the token families still fire).
 */
function redactField(key: string, value: string): Redacted<string> {
  // Rows repeat their short fields (roles, types, tool names, ids) thousands of times.
  if (value.length > FIELD_CACHE_MAX_CHARS) return redactFieldUncached(key, value);
  const id = `${key}\u0000${value}`;
  const hit = fieldCache.get(id);
  if (hit) return hit;
  if (fieldCache.size >= FIELD_CACHE_ENTRIES) fieldCache.clear();
  const r = redactFieldUncached(key, value);
  fieldCache.set(id, r);
  return r;
}

const FIELD_CACHE_MAX_CHARS = 256;
const FIELD_CACHE_ENTRIES = 50_000;
const fieldCache = new Map<string, Redacted<string>>();

function redactFieldUncached(key: string, value: string): Redacted<string> {
  const probe = pythonJson({ [key]: value });
  const r = redactText(probe);
  if (r.count === 0) return { value, count: 0, categories: {} };
  try {
    const back: unknown = JSON.parse(r.value);
    if (isRecord(back) && typeof back[key] === "string") return { ...r, value: back[key] };
  } catch {
    // A replacement next to an escape broke the probe: fall through.
  }
  return redactText(value);
}

/** Every string in a JSON value, redacted; numbers, booleans, nulls and keys untouched. */
export function redactValue<T>(value: T): Redacted<T> {
  const categories: SecretCounts = {};
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      const r = redactText(v);
      addCounts(categories, r.categories);
      return r.value;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isRecord(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        if (typeof item === "string") {
          const r = redactField(k, item);
          addCounts(categories, r.categories);
          out[k] = r.value;
        } else out[k] = walk(item);
      }
      return out;
    }
    return v;
  };
  const out = walk(value) as T;
  return { value: out, count: total(categories), categories };
}

/** "2 API keys, 1 bearer token": for messages. */
export function describeCounts(c: SecretCounts): string {
  return Object.entries(c)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([k, n]) => `${n} ${k}${n === 1 ? "" : "s"}`)
    .join(", ");
}
