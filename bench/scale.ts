// A group of 8 rollouts of one task at --parallel-jobs 8 next to --parallel-jobs 1 (the seed's
// default, one repeat job after another) and next to one trial alone, on a task whose oracle sleeps
// 5 s, in the namespace sandbox. Target: the group at most 1.5x one trial.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Evaluation } from "../src/job/evaluation.js";
import { slowHelloTasks } from "../test/testing/bench.js";
import type { BenchRow } from "./report.js";

async function wallMs(task: string, jobsDir: string, trials: number, parallelJobs: number): Promise<number> {
  const t0 = performance.now();
  const result = await new Evaluation({
    tasks: task,
    agent: "oracle",
    trials,
    parallelJobs,
    concurrency: 1,
    jobsDir,
    sandbox: "namespace",
  }).run();
  const ms = performance.now() - t0;
  if (result.results.length !== trials || result.results.some((r) => r.rewards?.reward !== 1))
    throw new Error(
      `bench: the group of ${trials} at --parallel-jobs ${parallelJobs} did not score 1.0 each`,
    );
  return ms;
}

export async function benchScale(): Promise<BenchRow[]> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-scale-"));
  try {
    const task = path.join(await slowHelloTasks(path.join(scratch, "tasks"), ["sleepy"], 5), "sleepy");
    const one = await wallMs(task, path.join(scratch, "one"), 1, 1);
    const serial = await wallMs(task, path.join(scratch, "serial"), 8, 1);
    const parallel = await wallMs(task, path.join(scratch, "parallel"), 8, 8);
    return [
      {
        name: "group of 8, --parallel-jobs 8 (wall)",
        value: parallel,
        unit: "ms",
        baseline: serial,
        baselineName: "--parallel-jobs 1",
      },
      {
        name: "group of 8, --parallel-jobs 8, vs one trial",
        value: parallel,
        unit: "ms",
        baseline: one,
        baselineName: "one trial",
        target: "<= 1.5x one trial",
        ok: parallel <= 1.5 * one,
      },
    ];
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
