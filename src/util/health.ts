// The one healthcheck loop (compose's rules, which Harbor's and upstream's task healthchecks share):
// probe at once, then every interval (start_interval inside start_period); a failure inside
// start_period does not count; `retries` failures in a row after it are unhealthy.

export interface ProbeResult {
  /** null when the probe timed out. */
  exitCode: number | null;
  output: string;
}

export interface HealthRules {
  intervalMs: number;
  startPeriodMs: number;
  startIntervalMs: number;
  retries: number;
}

export type HealthVerdict = { healthy: true } | { healthy: false; failures: number; last: ProbeResult };

export async function awaitHealth(
  probe: () => Promise<ProbeResult>,
  rules: HealthRules,
  signal?: AbortSignal,
): Promise<HealthVerdict> {
  const started = Date.now();
  let failures = 0;
  for (;;) {
    signal?.throwIfAborted();
    const probeStart = Date.now();
    const last = await probe();
    if (last.exitCode === 0) return { healthy: true };
    const inStartPeriod = probeStart - started < rules.startPeriodMs;
    if (!inStartPeriod && ++failures >= rules.retries) return { healthy: false, failures, last };
    const wait = (inStartPeriod ? rules.startIntervalMs : rules.intervalMs) - (Date.now() - probeStart);
    if (wait > 0) await sleep(wait, signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
