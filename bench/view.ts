// bench view: a folder of 1,000 and one of 10,000 rollouts (8 trial-NN jobs, 2 model calls each,
// tokens captured), each measured in a process of its own: time from starting the server to the
// first page served, to every rollout read, and the server's memory then, next to reading the same files with the
// jobs-dir reader (every result.json, every rollout folder read whole). Targets: first page of
// 10,000 rollouts under 1 s; server memory flat from 1,000 to 10,000 rollouts (<= 1.25x).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { scanRollouts } from "../src/jobs-dir/index.js";
import { writePlan, writeRollout, writeSummary } from "../src/jobs-dir/testing/job-builder.js";
import { startViewServer } from "../src/view/index.js";
import { reportFromChild } from "./child.js";
import { type BenchRow, median } from "./report.js";

const HERE = fileURLToPath(import.meta.url);
const REPEATS = 8;
const SIZES = [1000, 10000];

function generate(root: string, rollouts: number): void {
  const tasks = Array.from({ length: rollouts / REPEATS }, (_, i) => `task-${String(i).padStart(5, "0")}`);
  for (let t = 1; t <= REPEATS; t++) {
    const job = {
      dir: path.join(root, "bench-agent", `trial-0${t}`, "job"),
      agent: "bench-agent",
      rollouts: [],
    };
    writePlan(job, tasks);
    for (const [i, task] of tasks.entries())
      writeRollout(job.dir, { task, reward: (i * 7 + t) % 3 === 0 ? 0 : 1, tokens: true }, job);
    writeSummary(job.dir, job);
  }
}

interface ChildReport {
  firstPageMs: number;
  /** Until every rollout is read (the server) or read whole (the baseline). */
  indexMs: number;
  warmPageMs: number;
  groupPageMs: number;
  rolloutPageMs: number;
  rssMb: number;
  heapMb: number;
  rollouts: number;
}

const gcNow = () => (globalThis as { gc?: () => void }).gc?.();

function memory(): { rssMb: number; heapMb: number } {
  gcNow();
  const m = process.memoryUsage();
  return { rssMb: m.rss / 2 ** 20, heapMb: m.heapUsed / 2 ** 20 };
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

async function child(mode: string, root: string): Promise<void> {
  let report: ChildReport;
  if (mode === "serve") {
    const t0 = performance.now();
    const server = await startViewServer({ jobsDir: root });
    const home = await (await fetch(server.url)).text();
    const firstPageMs = performance.now() - t0;
    await server.index.ready;
    const indexMs = performance.now() - t0;
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push((await timed(async () => (await fetch(server.url)).text()))[0]);
    const gid = /data-group-id="([^"]+)"/.exec(home)?.[1];
    const [groupPageMs] = await timed(async () =>
      (await fetch(new URL(`/groups/${gid}`, server.url))).text(),
    );
    const first = [...server.index.rollouts.keys()][0];
    const [rolloutPageMs] = await timed(async () =>
      (await fetch(new URL(`/rollouts/${first}`, server.url))).text(),
    );
    report = {
      firstPageMs,
      indexMs,
      warmPageMs: median(warm),
      groupPageMs,
      rolloutPageMs,
      ...memory(),
      rollouts: server.index.rollouts.size,
    };
    await server.close();
  } else {
    // The baseline: the jobs-dir reader over the same folder, every rollout read whole and kept.
    const t0 = performance.now();
    const { rollouts } = await scanRollouts(root, { infer: false });
    const ms = performance.now() - t0;
    report = {
      firstPageMs: ms,
      indexMs: ms,
      warmPageMs: 0,
      groupPageMs: 0,
      rolloutPageMs: 0,
      ...memory(),
      rollouts: rollouts.length,
    };
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

function inChild(mode: string, root: string): Promise<ChildReport> {
  return reportFromChild<ChildReport>(HERE, [mode, root], ["--expose-gc"]);
}

export async function benchView(): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "bf-bench-view-"));
  try {
    const serve: Record<number, ChildReport> = {};
    const read: Record<number, ChildReport> = {};
    for (const n of SIZES) {
      const root = path.join(base, String(n));
      generate(root, n);
      // A first read warms the page cache for both, so neither pays for the disk alone.
      await inChild("read", root);
      read[n] = await inChild("read", root);
      serve[n] = await inChild("serve", root);
    }
    const [small, large] = SIZES as [number, number];
    const s = serve[large] as ChildReport;
    const s1 = serve[small] as ChildReport;
    const r = read[large] as ChildReport;
    const r1 = read[small] as ChildReport;
    return [
      {
        name: `view: start to first page, ${large} rollouts`,
        value: s.firstPageMs / 1000,
        unit: "s",
        baseline: r.firstPageMs / 1000,
        baselineName: "jobs-dir reader, every rollout",
        target: "< 1 s",
        ok: s.firstPageMs < 1000,
      },
      {
        name: `view: start to every rollout read, ${large}`,
        value: s.indexMs / 1000,
        unit: "s",
        baseline: r.indexMs / 1000,
        baselineName: "jobs-dir reader, every rollout",
      },
      {
        name: `view: start to first page, ${small} rollouts`,
        value: s1.firstPageMs / 1000,
        unit: "s",
        baseline: r1.firstPageMs / 1000,
        baselineName: "jobs-dir reader, every rollout",
      },
      { name: `view: runs page once indexed (median of 5), ${large}`, value: s.warmPageMs, unit: "ms" },
      { name: `view: a group page, ${large}`, value: s.groupPageMs, unit: "ms" },
      { name: `view: a rollout page, ${large}`, value: s.rolloutPageMs, unit: "ms" },
      {
        name: `view: server RSS, every rollout read, ${large}`,
        value: s.rssMb,
        unit: "MB",
        baseline: s1.rssMb,
        baselineName: `${small} rollouts`,
        target: "flat (<= 1.25x)",
        ok: s.rssMb <= 1.25 * s1.rssMb,
      },
      {
        name: `view: server heap, every rollout read, ${large}`,
        value: s.heapMb,
        unit: "MB",
        baseline: s1.heapMb,
        baselineName: `${small} rollouts`,
      },
      {
        name: `jobs-dir reader RSS, every rollout kept, ${large}`,
        value: r.rssMb,
        unit: "MB",
        baseline: r1.rssMb,
        baselineName: `${small} rollouts`,
      },
    ];
  } finally {
    spawn("rm", ["-rf", base], { detached: true, stdio: "ignore" }).unref();
  }
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") await child(argv[1] as string, argv[2] as string);
else if (process.argv[1] && path.resolve(process.argv[1]) === HERE) {
  const { printRows } = await import("./report.js");
  printRows("bench view (first page, memory)", await benchView());
}
