// [verifier.hardening]: upstream's one flag, cleanup_conftests (default true). False leaves every
// conftest.py alone (neither removed when new nor restored when changed); the rest of hardening runs.
import type { FieldReader } from "./config-reader.js";
import { isTable } from "./keys.js";

export function readVerifierHardening(
  r: FieldReader,
  value: unknown,
): { cleanupConftests: boolean } | undefined {
  if (value === undefined) return undefined;
  if (!isTable(value)) {
    r.problem(
      "verifier.hardening",
      "must be a table",
      "write [verifier.hardening] with cleanup_conftests = true or false",
    );
    return undefined;
  }
  const flag = value.cleanup_conftests;
  if (flag === undefined) return { cleanupConftests: true };
  if (typeof flag !== "boolean") {
    r.problem(
      "verifier.hardening.cleanup_conftests",
      `= ${JSON.stringify(flag)} is not a boolean`,
      "write cleanup_conftests = true or cleanup_conftests = false",
    );
    return undefined;
  }
  return { cleanupConftests: flag };
}
