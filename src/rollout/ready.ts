// Between the sandbox's start and the agent's setup: the task's `[environment.healthcheck]` (as root,
// as upstream does), then its `setup_commands`. A sandbox that never becomes healthy, or a setup
// command that fails, is `sandbox_setup`: the environment, not the policy, failed (and it may pass
// on a retry: a package mirror that was down, say).
import { CategorizedError } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import type { TaskHealthcheck } from "../task/healthcheck.js";
import type { Task } from "../task/types.js";
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

/** The healthcheck, then each setup command in order. */
export async function readyEnvironment(sandbox: Sandbox, task: Task, signal?: AbortSignal): Promise<void> {
  const { healthcheck, setupCommands } = task.config.sandbox;
  if (healthcheck) await runTaskHealthcheck(sandbox, healthcheck, task.name, signal);
  for (const [i, c] of setupCommands.entries()) {
    const r = await sandbox.exec(c.command, {
      user: c.user,
      timeoutSec: c.timeoutSec,
      env: c.env,
      ...(c.cwd ? { cwd: c.cwd } : {}),
      ...(signal ? { signal } : {}),
      maxOutputBytes: 8192,
    });
    if (r.exitCode === 0) continue;
    const how = r.timedOut ? `ran past ${c.timeoutSec}s` : `exited ${r.exitCode}`;
    const out = `${r.stdout}${r.stderr}`.trim().slice(-1000) || "(no output)";
    throw new CategorizedError(
      "sandbox_setup",
      `task ${task.name}: setup_commands[${i}] ${JSON.stringify(c.command)} ${how}; last output: ${out}`,
    );
  }
}
