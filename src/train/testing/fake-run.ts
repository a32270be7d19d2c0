// A stand-in for `bench run` in tests and benchmarks: a separate process that writes every job's
// plan first, then runs the jobs one after another, each under a lock naming its own pid, writing
// rollouts one by one (result.json last, atomically), then the summary. It prints
// `result <rollout dir> <epoch ms>` when each result.json lands.
//   node --import tsx fake-run.ts '{"jobs":[{"dir":"...","rollouts":[{"task":"t","reward":1}]}],"intervalMs":20}'
import fs from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import {
  type JobSpec,
  type RolloutSpec,
  writeJson,
  writePlan,
  writeRollout,
  writeSummary,
} from "../../jobs-dir/testing/job-builder.js";

/** `retryOf`: the hex of the attempt this one retries; it is marked replaced first, as bench run does. */
type FakeJob = Omit<JobSpec, "rollouts"> & {
  rollouts: Array<RolloutSpec & { retryOf?: string }>;
  /** The plan's tasks when they are not the rollouts' (a job the run will never start). */
  plannedTasks?: string[];
};

interface FakeRun {
  jobs: FakeJob[];
  intervalMs: number;
  /** Stop writing (and wait to be killed) after this many rollouts. */
  hangAfter?: number;
  retryAttempts?: number;
}

const spec = JSON.parse(process.argv[2] ?? "{}") as FakeRun;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const job of spec.jobs)
  writePlan(
    { ...job, retryAttempts: spec.retryAttempts ?? 0 },
    job.plannedTasks ?? job.rollouts.map((r) => r.task ?? "demo-task"),
  );
let written = 0;
for (const job of spec.jobs) {
  const lock = path.join(job.dir, ".evaluation.lock");
  writeJson(lock, { pid: process.pid, host: hostname(), started_at: new Date().toISOString() });
  for (const r of job.rollouts) {
    if (spec.hangAfter !== undefined && written >= spec.hangAfter)
      await new Promise(() => setInterval(() => undefined, 1 << 30));
    if (r.retryOf) {
      const old = path.join(job.dir, `${r.task ?? "demo-task"}__${r.retryOf}`);
      writeJson(path.join(old, "replaced.json"), {
        replaced_by: `${r.task}__${r.hex}`,
        reason: "retried",
        at: new Date().toISOString(),
      });
    }
    await sleep(spec.intervalMs);
    const built = writeRollout(job.dir, r, job);
    process.stdout.write(`result ${built.dir} ${performance.timeOrigin + performance.now()}\n`);
    written++;
  }
  writeSummary(job.dir, job);
  fs.rmSync(lock);
}
