// Compares a JSON value's shape (keys, nesting, types) with a recorded example, so our wire format is
// checked against what real servers sent rather than against our own client.

export interface ShapeOptions {
  /** Keys we may send that the example lacks (e.g. fields newer than the example's server). */
  allowExtra?: readonly string[];
  /** Keys of the example we may leave out (e.g. OpenAI-only fields vLLM never sends). */
  allowMissing?: readonly string[];
  /** Keys whose value may be null where the example happens to hold a value. */
  nullable?: readonly string[];
}

/** Differences between `actual` and the example's shape; empty when they agree. A null in the example
 * accepts any value; arrays are compared element-wise against the example's first element. */
export function shapeMismatches(
  actual: unknown,
  example: unknown,
  options: ShapeOptions = {},
  path = "$",
): string[] {
  if (example === null) return [];
  if (Array.isArray(example)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${kind(actual)}`];
    const [first] = example;
    if (first === undefined) return [];
    return actual.flatMap((item, i) => shapeMismatches(item, first, options, `${path}[${i}]`));
  }
  if (typeof example === "object") {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) {
      return [`${path}: expected an object, got ${kind(actual)}`];
    }
    const expected = example as Record<string, unknown>;
    const got = actual as Record<string, unknown>;
    const problems: string[] = [];
    for (const key of Object.keys(expected)) {
      if (got[key] === null && options.nullable?.includes(key)) continue;
      if (key in got) problems.push(...shapeMismatches(got[key], expected[key], options, `${path}.${key}`));
      else if (!options.allowMissing?.includes(key)) problems.push(`${path}.${key}: missing`);
    }
    for (const key of Object.keys(got)) {
      if (!(key in expected) && !options.allowExtra?.includes(key))
        problems.push(`${path}.${key}: unexpected key`);
    }
    return problems;
  }
  return kind(actual) === kind(example) ? [] : [`${path}: expected ${kind(example)}, got ${kind(actual)}`];
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
