// A group of 8 rollouts of one task at --parallel-jobs 8 next to --parallel-jobs 1 (the seed's
// default, one repeat job after another) and next to one rollout alone, on a task whose oracle sleeps
// 5 s, in the namespace sandbox. Target: the group at most 1.5x one rollout.
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Evaluation } from "../src/job/evaluation.js";
import { REPO, slowHelloTasks } from "../test/testing/bench.js";
import type { BenchRow } from "./report.js";

type ExecutorSetting = NonNullable<ConstructorParameters<typeof Evaluation>[0]["executor"]>;
const SHARED_ROOT = process.env.BENCHFLOW_SLURM_SHARED_ROOT ?? "/var/lib/benchflow-slurm/shared";

function slurmAnswers(): boolean {
  try {
    return execFileSync("sinfo", ["-h", "-o", "%P"], { encoding: "utf8", timeout: 10_000 }).includes("main");
  } catch {
    return false;
  }
}

async function wallMs(
  task: string,
  jobsDir: string,
  repeats: number,
  parallelJobs: number,
  executor?: ExecutorSetting,
  Eval: typeof Evaluation = Evaluation,
): Promise<number> {
  const t0 = performance.now();
  const result = await new Eval({
    tasks: task,
    agent: "oracle",
    trials: repeats,
    parallelJobs,
    concurrency: 1,
    jobsDir,
    sandbox: "namespace",
    ...(executor ? { executor } : {}),
  }).run();
  const ms = performance.now() - t0;
  if (result.results.length !== repeats || result.results.some((r) => r.rewards?.reward !== 1))
    throw new Error(
      `bench: the group of ${repeats} at --parallel-jobs ${parallelJobs} did not score 1.0 each`,
    );
  return ms;
}

/**
 * --executor slurm on the local cluster of scripts/setup-slurm.sh. The time one more rollout costs:
 * (wall of 6 rollouts one after another - wall of 1) / 5, which leaves out what a run pays once (the
 * start check's srun on each node), next to the same on the local executor; the start itself is its
 * own row. Five rollouts make the mean: SLURM's scheduling pass (once a second, whenever the sbatch
 * came) makes each rollout's cost vary by up to 1 s. And the group of 8 at --parallel-jobs 8 placed by SLURM next to one rollout there.
 */
async function benchSlurm(): Promise<BenchRow[]> {
  // The built package (what npm installs), so a node starts plain node on built code as a user's does;
  // from a checkout under tsx each node compiles the rollout's code first (docs/run-on-a-cluster.md).
  execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO, stdio: "inherit" });
  const built = (await import(pathToFileURL(path.join(REPO, "dist/job/evaluation.js")).href)) as {
    Evaluation: typeof Evaluation;
  };
  const scratch = await fs.mkdtemp(path.join(SHARED_ROOT, "bench-"));
  try {
    // Tasks and jobs on the root the nodes share (a node sees no /tmp of ours).
    const task = path.join(await slowHelloTasks(path.join(scratch, "tasks"), ["sleepy"], 5), "sleepy");
    const slurm: ExecutorSetting = { kind: "slurm", partition: "main" };
    let n = 0;
    const run = (repeats: number, parallelJobs: number, executor?: ExecutorSetting) =>
      wallMs(task, path.join(scratch, `run-${n++}`), repeats, parallelJobs, executor, built.Evaluation);
    const localOne = await run(1, 1);
    const localSix = await run(6, 1);
    const slurmOne = await run(1, 1, slurm);
    const slurmSix = await run(6, 1, slurm);
    const localPer = (localSix - localOne) / 5;
    const slurmPer = (slurmSix - slurmOne) / 5;
    const group = await run(8, 8, slurm);
    return [
      {
        name: "one more trial, --executor slurm",
        value: slurmPer,
        unit: "ms",
        baseline: localPer,
        baselineName: "--executor local",
      },
      {
        name: "added per trial by --executor slurm",
        value: slurmPer - localPer,
        unit: "ms",
        target: "<= 1000 ms",
        ok: slurmPer - localPer <= 1000,
      },
      {
        name: "a run's start, --executor slurm (1 trial, wall)",
        value: slurmOne,
        unit: "ms",
        baseline: localOne,
        baselineName: "--executor local",
      },
      {
        name: "group of 8, slurm, --parallel-jobs 8 vs one trial there",
        value: group,
        unit: "ms",
        baseline: slurmOne,
        baselineName: "one trial, slurm",
        target: "<= 1.5x one trial",
        ok: group <= 1.5 * slurmOne,
      },
    ];
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

export async function benchScale(): Promise<BenchRow[]> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-scale-"));
  try {
    const task = path.join(await slowHelloTasks(path.join(scratch, "tasks"), ["sleepy"], 5), "sleepy");
    const one = await wallMs(task, path.join(scratch, "one"), 1, 1);
    const serial = await wallMs(task, path.join(scratch, "serial"), 8, 1);
    const parallel = await wallMs(task, path.join(scratch, "parallel"), 8, 8);
    const slurm = slurmAnswers()
      ? await benchSlurm()
      : [
          {
            name: "--executor slurm: skipped (no local cluster; bash scripts/setup-slurm.sh)",
            value: 0,
            unit: "ms",
          },
        ];
    return [
      ...slurm,
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
