// [verifier.hardening]: upstream's one flag, cleanup_conftests (default true), and ours,
// restore_build_files (default true). cleanup_conftests = false leaves every conftest.py alone
// (neither removed when new nor restored when changed); restore_build_files = false leaves the
// workspace's build files (Makefile, pyproject.toml, ...) as the agent left them, for a task whose
// answer is one of them. The rest of hardening runs either way.
import type { FieldReader } from "./config-reader.js";
import { isTable } from "./keys.js";

export interface VerifierHardeningConfig {
  cleanupConftests: boolean;
  restoreBuildFiles: boolean;
}

const FLAGS = { cleanup_conftests: "cleanupConftests", restore_build_files: "restoreBuildFiles" } as const;

export function readVerifierHardening(r: FieldReader, value: unknown): VerifierHardeningConfig | undefined {
  if (value === undefined) return undefined;
  if (!isTable(value)) {
    r.problem(
      "verifier.hardening",
      "must be a table",
      "write [verifier.hardening] with cleanup_conftests or restore_build_files = true or false",
    );
    return undefined;
  }
  const config: VerifierHardeningConfig = { cleanupConftests: true, restoreBuildFiles: true };
  for (const [key, field] of Object.entries(FLAGS)) {
    const flag = value[key];
    if (flag === undefined) continue;
    if (typeof flag !== "boolean") {
      r.problem(
        `verifier.hardening.${key}`,
        `= ${JSON.stringify(flag)} is not a boolean`,
        `write ${key} = true or ${key} = false`,
      );
      return undefined;
    }
    config[field] = flag;
  }
  return config;
}
