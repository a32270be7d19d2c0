// The task's `[environment.healthcheck]`, run in the sandbox after it starts and before the agent is
// set up (as root, as upstream does). A sandbox that never becomes healthy is `sandbox_setup`: the
// environment, not the policy, failed.
import { CategorizedError } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import type { TaskHealthcheck } from "../task/healthcheck.js";
import { awaitHealth } from "../util/health.js";

export async function runTaskHealthcheck(
  sandbox: Sandbox,
  check: TaskHealthcheck,
  taskName: string,
  signal?: AbortSignal,
): Promise<void> {
  const verdict = await awaitHealth(
    async () => {
      const r = await sandbox.exec(check.command, {
        user: "root",
        timeoutSec: check.timeoutSec,
        ...(signal ? { signal } : {}),
        maxOutputBytes: 4096,
      });
      return { exitCode: r.timedOut ? null : r.exitCode, output: `${r.stdout}${r.stderr}` };
    },
    {
      intervalMs: check.intervalSec * 1000,
      startPeriodMs: check.startPeriodSec * 1000,
      startIntervalMs: check.startIntervalSec * 1000,
      retries: check.retries,
    },
    signal,
  );
  if (verdict.healthy) return;
  const out = verdict.last.output.trim().slice(-1000) || "(no output)";
  throw new CategorizedError(
    "sandbox_setup",
    `task ${taskName}: the environment never became healthy: its healthcheck ${JSON.stringify(check.command)} failed ${verdict.failures} time(s) in a row (exit ${verdict.last.exitCode ?? "none: timed out"}); last output: ${out}`,
  );
}
