// bench run's cost per rollout against the same scripts run straight under bwrap, and throughput
// of one job over 200 copies of a trivial task at -j 8.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Evaluation } from "../src/job/evaluation.js";
import { type BenchRow, median } from "./report.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TRIVIAL = path.join(REPO, "examples/tasks/hello");

function run(argv: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(argv[0] as string, argv.slice(1), { stdio: "ignore" });
    child.on("close", resolve);
  });
}

/** The baseline: the oracle's and the verifier's scripts, each in a fresh bwrap, nothing else. */
async function bareRollout(scratch: string): Promise<void> {
  const app = path.join(scratch, "app");
  const logs = path.join(scratch, "logs");
  await fs.mkdir(app, { recursive: true });
  await fs.mkdir(path.join(logs, "verifier"), { recursive: true });
  const base = ["bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"];
  for (const link of ["bin", "sbin", "lib", "lib64"]) base.push("--symlink", `usr/${link}`, `/${link}`);
  base.push(
    "--bind",
    app,
    "/app",
    "--bind",
    logs,
    "/logs",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
  );
  base.push("--unshare-all", "--die-with-parent", "--chdir", "/app");
  await run([
    ...base,
    "--ro-bind",
    path.join(TRIVIAL, "solution"),
    "/solution",
    "bash",
    "/solution/solve.sh",
  ]);
  await run([
    ...base,
    "--ro-bind",
    path.join(TRIVIAL, "tests"),
    "/tests",
    "bash",
    "-c",
    "bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1",
  ]);
}

async function copies(dir: string, n: number): Promise<string> {
  for (let i = 0; i < n; i++)
    await fs.cp(TRIVIAL, path.join(dir, `hello-${String(i).padStart(3, "0")}`), { recursive: true });
  return dir;
}

async function timeBench(tasks: string, jobsDir: string, concurrency: number): Promise<number> {
  const t0 = performance.now();
  const result = await new Evaluation({
    tasks,
    agent: "oracle",
    jobsDir,
    concurrency,
    sandbox: "namespace",
  }).run();
  const ms = performance.now() - t0;
  if (result.results.some((r) => r.rewards?.reward !== 1))
    throw new Error("bench: a trivial trial did not score 1.0");
  return ms;
}

export async function benchRun(): Promise<BenchRow[]> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-run-"));
  try {
    const n = 50;
    const tasks50 = await copies(path.join(root, "tasks50"), n);
    const ours: number[] = [];
    const bare: number[] = [];
    for (let rep = 0; rep < 3; rep++) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await bareRollout(path.join(root, `bare-${rep}-${i}`));
      bare.push((performance.now() - t0) / n);
      ours.push((await timeBench(tasks50, path.join(root, `jobs-seq-${rep}`), 1)) / n);
    }
    const tasks200 = await copies(path.join(root, "tasks200"), 200);
    const rates: number[] = [];
    for (let rep = 0; rep < 3; rep++)
      rates.push(200 / ((await timeBench(tasks200, path.join(root, `jobs-par-${rep}`), 8)) / 1000));
    const perRollout = median(ours);
    const bareRolloutMs = median(bare);
    const overhead = perRollout - bareRolloutMs;
    const rate = median(rates);
    return [
      {
        name: "oracle trial on a trivial task, bench run (-j 1, 50 trials)",
        value: perRollout,
        unit: "ms",
        baseline: bareRolloutMs,
        baselineName: "same scripts under bare bwrap",
      },
      {
        name: "overhead per trial (bench run - bare bwrap)",
        value: overhead,
        unit: "ms",
        target: "<= 30 ms",
        ok: overhead <= 30,
      },
      {
        name: "throughput, 200 trivial tasks at -j 8",
        value: rate,
        unit: "trials/s",
        target: ">= 40 trials/s",
        ok: rate >= 40,
      },
    ];
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}
