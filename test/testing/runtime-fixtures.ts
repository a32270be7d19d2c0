// Runs the fixtures of harbor-runtime.md's network and workdir points (network-verifier: sets no
// network and its verifier needs it; workdir-root: WORKDIR /root) with the oracle and nop through
// the real CLI, and checks oracle 1.0 and nop 0.0, both scored (never unscored).
import assert from "node:assert/strict";
import path from "node:path";
import { bench, FIXTURES, rollouts } from "./bench.js";

export const RUNTIME_FIXTURES = ["network-verifier", "workdir-root"] as const;

export async function scoresOracleAndNop(
  task: (typeof RUNTIME_FIXTURES)[number],
  sandbox: "namespace" | "container",
  jobsRoot: string,
): Promise<void> {
  for (const [agent, reward] of [
    ["oracle", 1],
    ["nop", 0],
  ] as const) {
    const jobsDir = path.join(jobsRoot, `${task}-${agent}`);
    const run = await bench([
      "run",
      path.join(FIXTURES, task),
      "-a",
      agent,
      "--sandbox",
      sandbox,
      "--jobs-dir",
      jobsDir,
    ]);
    const [found] = await rollouts(jobsDir);
    const result = found?.result;
    assert.equal(result?.verifier_error, null, `${task} ${agent}: ${result?.verifier_error} ${run.stderr}`);
    assert.equal(result?.error, null, `${task} ${agent}: ${result?.error}`);
    assert.equal(
      result?.rewards?.reward,
      reward,
      `${task} ${agent} in ${sandbox}: ${run.stdout}${run.stderr}`,
    );
    assert.equal(run.code, 0, run.stderr);
  }
}
