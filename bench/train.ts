// bench train: convert 10,000 rollouts of 20 model calls (four repeat jobs of 2,500 tasks, grouped
// by task,agent,model) next to merely reading and parsing the same files, each in its own process
// so peak memory is its own; peak memory again on a quarter of the rollouts (flat = the same); and
// the stream's delay from a result.json landing to its record, against a separate writer process.
// Targets: convert <= 1.5x read-and-parse, memory flat in rollouts, stream delay p99 <= 100 ms.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writePlan, writeRollout, writeSummary } from "../src/jobs-dir/testing/job-builder.js";
import { trajectoryLines } from "../src/jobs-dir/testing/trajectory-builder.js";
import { convertJob } from "../src/train/convert/convert.js";
import { streamRollouts } from "../src/train/stream/stream.js";
import { reportFromChild } from "./child.js";
import { type BenchRow, median, percentile } from "./report.js";

const HERE = fileURLToPath(import.meta.url);
const FAKE_RUN = path.join(path.dirname(HERE), "..", "src", "train", "testing", "fake-run.ts");
const REPEATS = 4;
const TASKS = 2500;
const CALLS = 20;
const GROUP_BY = "task,agent,model";

function generate(root: string): void {
  const text = `${trajectoryLines({ task: "bench", model: "vllm/policy", calls: Array.from({ length: CALLS }, () => ({})), wire: "openai-chat" }).join("\n")}\n`;
  const tasks = Array.from({ length: TASKS }, (_, i) => `task-${String(i).padStart(5, "0")}`);
  for (let t = 1; t <= REPEATS; t++) {
    const job = {
      dir: path.join(root, "bench-agent", `trial-0${t}`, "job"),
      agent: "bench-agent",
      rollouts: [],
    };
    writePlan(job, tasks);
    for (const [i, task] of tasks.entries()) {
      const built = writeRollout(job.dir, { task, reward: (i * 7 + t) % 3 === 0 ? 0 : 1, calls: 0 }, job);
      fs.writeFileSync(path.join(built.dir, "trajectory", "llm_trajectory.jsonl"), text);
    }
    writeSummary(job.dir, job);
  }
}

/** The floor: read every result.json and every call line, parse them, nothing else. */
async function readAndParse(root: string): Promise<number> {
  let lines = 0;
  const walk = async (dir: string): Promise<void> => {
    const entries = await fs.promises.readdir(dir, { withFileTypes: true });
    if (entries.some((e) => e.name === "result.json")) {
      JSON.parse(await fs.promises.readFile(path.join(dir, "result.json"), "utf8"));
      const text = await fs.promises
        .readFile(path.join(dir, "trajectory", "llm_trajectory.jsonl"), "utf8")
        .catch(() => "");
      for (const line of text.split("\n")) if (line !== "") lines += JSON.parse(line) ? 1 : 0;
      return;
    }
    for (const e of entries) if (e.isDirectory()) await walk(path.join(dir, e.name));
  };
  await walk(root);
  return lines;
}

interface ChildReport {
  seconds: number;
  maxRssMb: number;
  rows: number;
}

async function child(mode: string, input: string, out: string): Promise<void> {
  const t0 = performance.now();
  let rows = 0;
  if (mode === "read") rows = await readAndParse(input);
  // As the CLI runs it: the manifest's long lists are not kept in memory.
  else
    rows = (
      await convertJob({ jobs: input, out, groupAdvantage: "grpo", groupBy: GROUP_BY, keepGroups: false })
    ).rows;
  const report: ChildReport = {
    seconds: (performance.now() - t0) / 1000,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    rows,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

function inChild(mode: string, input: string, out = ""): Promise<ChildReport> {
  return reportFromChild<ChildReport>(HERE, [mode, input, out]);
}

/** Delay from each result.json landing (written by a separate process) to its stream record. */
async function streamDelays(root: string, rollouts: number): Promise<number[]> {
  const dir = path.join(root, "live", "job");
  const spec = {
    jobs: [{ dir, rollouts: Array.from({ length: rollouts }, (_, i) => ({ task: `t${i}`, reward: i % 2 })) }],
    intervalMs: 15,
  };
  const writer = spawn(process.execPath, ["--import", "tsx", FAKE_RUN, JSON.stringify(spec)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const landed = new Map<string, number>();
  let buf = "";
  writer.stdout.on("data", (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split("\n");
    buf = lines.pop() ?? "";
    for (const l of lines) {
      const [, rolloutDir, at] = l.split(" ");
      if (rolloutDir && at) landed.set(rolloutDir, Number(at));
    }
  });
  const seen: Array<[string, number]> = [];
  // Polling once a second, as upstream does: the delays below come from file-system events.
  for await (const r of streamRollouts(dir, { pollIntervalMs: 1000, timeoutMs: 120_000 })) {
    seen.push([path.join(dir, r.rollout_path), performance.timeOrigin + performance.now()]);
  }
  await new Promise((r) => (writer.exitCode === null ? writer.on("exit", r) : r(null)));
  return seen.map(([d, at]) => at - (landed.get(d) ?? at)).filter((ms) => ms >= 0);
}

export async function benchTrain(): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "bf-bench-train-"));
  try {
    generate(root);
    const all = path.join(root, "bench-agent");
    const quarter = path.join(all, "trial-01");
    const read = await inChild("read", all);
    const convert = await inChild("convert", all, path.join(root, "rows.jsonl"));
    const small = await inChild("convert", quarter, path.join(root, "rows-quarter.jsonl"));
    const delays = await streamDelays(root, 300);
    const ratio = convert.seconds / read.seconds;
    return [
      {
        name: `convert ${REPEATS * TASKS} rollouts x ${CALLS} calls (grpo)`,
        value: convert.seconds,
        unit: "s",
        baseline: read.seconds,
        baselineName: "read+parse",
        target: "<= 1.5x read+parse",
        ok: ratio <= 1.5,
      },
      { name: "convert rows per second", value: convert.rows / convert.seconds, unit: "rows/s" },
      {
        name: `convert peak memory, ${REPEATS * TASKS} rollouts`,
        value: convert.maxRssMb,
        unit: "MB",
        baseline: small.maxRssMb,
        baselineName: `${TASKS} rollouts`,
        target: "flat (<= 1.25x)",
        ok: convert.maxRssMb <= 1.25 * small.maxRssMb,
      },
      { name: "read+parse peak memory", value: read.maxRssMb, unit: "MB" },
      { name: `stream delay p50 (${delays.length} rollouts)`, value: median(delays), unit: "ms" },
      {
        name: "stream delay p99",
        value: percentile(delays, 99),
        unit: "ms",
        target: "<= 100 ms",
        ok: percentile(delays, 99) <= 100,
      },
    ];
  } finally {
    // 40,000 files take seconds to delete on a busy disk: let rm do it without holding the bench up.
    spawn("rm", ["-rf", root], { detached: true, stdio: "ignore" }).unref();
  }
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") await child(argv[1] as string, argv[2] as string, argv[3] as string);
else if (process.argv[1] && path.resolve(process.argv[1]) === HERE) {
  const { printRows } = await import("./report.js");
  printRows("bench train (convert, stream)", await benchTrain());
}
