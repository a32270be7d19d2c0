// A service's healthcheck, run by us through exec with compose's rules: probes every interval
// (start_interval inside start_period), each cut at timeout; a failure inside start_period does not
// count; `retries` failures in a row after it make the service unhealthy. We run it ourselves
// because the engines do not reliably: Podman 4.3 schedules healthchecks with systemd timers, and
// without systemd (as on these machines) State.Health stays "starting" for ever. Unlike Docker,
// the first probe runs at once rather than one interval after the start, so a ready service is
// seen ready without waiting.

import { awaitHealth, type ProbeResult } from "../../../util/health.js";
import { readAll } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import type { HealthCheck } from "./model.js";

/** One probe: argv exec'd in the container, its output and exit code; null exit code on timeout. */
export async function probe(
  engine: Engine,
  id: string,
  argv: string[],
  timeoutMs: number,
  user?: string,
): Promise<ProbeResult> {
  const { Id } = await engine.client.json<{ Id: string }>("POST", `/containers/${id}/exec`, {
    // A tty gives one plain stream (no frame headers to split) for the log.
    json: { Cmd: argv, User: user, AttachStdout: true, AttachStderr: true, Tty: true },
  });
  const limit = AbortSignal.timeout(timeoutMs);
  try {
    const res = await engine.client.call("POST", `/exec/${Id}/start`, {
      json: { Detach: false, Tty: true },
      signal: limit,
    });
    const output = (await readAll(res)).toString("utf8");
    const { ExitCode } = await engine.client.json<{ ExitCode: number | null }>("GET", `/exec/${Id}/json`);
    return { exitCode: ExitCode, output };
  } catch (err) {
    if (limit.aborted)
      return { exitCode: null, output: `the probe ran past its timeout (${timeoutMs / 1000}s)` };
    throw err;
  }
}

export class UnhealthyError extends Error {
  override name = "UnhealthyError";
  constructor(
    readonly service: string,
    readonly lastOutput: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Resolves when the service is healthy; throws UnhealthyError after `retries` failures past
 * start_period, or the abort reason when `signal` aborts (another service failed, say). The loop
 * is the one the task's own healthcheck uses (util/health.ts).
 */
export async function awaitHealthy(
  engine: Engine,
  service: string,
  id: string,
  check: HealthCheck,
  signal: AbortSignal,
  user?: string,
): Promise<void> {
  const verdict = await awaitHealth(
    () => probe(engine, id, check.argv, check.timeoutMs, user),
    check,
    signal,
  );
  if (verdict.healthy) return;
  const { last, failures } = verdict;
  const out = last.output.trim().slice(-1000) || "(no output)";
  throw new UnhealthyError(
    service,
    out,
    `service ${service} never became healthy: its healthcheck ${JSON.stringify(check.argv)} failed ${failures} time(s) in a row` +
      ` (exit ${last.exitCode ?? "none: timed out"}); last output: ${out}`,
  );
}
