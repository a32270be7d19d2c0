// --parallel-jobs K: the N repeat jobs of a group run K at a time, with the same folders, rewards and
// stream records as one after another; a SIGINT mid-way and a rerun with the same --job-name
// complete exactly the trials that had not finished. The namespace sandbox, the oracle sleeping 5 s.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { bench, slowHelloTasks, startBench, useScratch, waitUntil } from "./testing/bench.js";

const TRIALS = 8;

function runArgs(
  tasks: string,
  jobsDir: string,
  parallel: number,
  jobName: string,
  trials = TRIALS,
  extra: string[] = [],
): string[] {
  return [
    "run",
    tasks,
    "-a",
    "oracle",
    "--sandbox",
    "namespace",
    "--trials",
    String(trials),
    "--parallel-jobs",
    String(parallel),
    "-j",
    "1",
    "--job-name",
    jobName,
    "--jobs-dir",
    jobsDir,
    "-q",
    ...extra,
  ];
}

/** What a trainer reads of a group, without the names a run draws at random: trial, reward, advantage. */
async function streamed(jobsDir: string): Promise<string[]> {
  const run = await bench([
    "train",
    "stream",
    path.join(jobsDir, "oracle"),
    "--no-follow",
    "--group-size",
    String(TRIALS),
    "--group-by",
    "task,agent,model",
  ]);
  assert.equal(run.code, 0, run.stderr);
  return run.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .map((r) => {
      const trial = String(r.rollout_path).split("/")[0];
      return JSON.stringify([trial, r.task, r.reward, r.advantage, r.scored, r.group_complete]);
    })
    .sort();
}

/** A rollout's result.json times. */
const timesOf = (r: { startedAt: string | null; finishedAt: string | null }) => ({
  started_at: r.startedAt ?? "",
  finished_at: r.finishedAt ?? "",
});

/** The most trials of a run that were running at one moment, from their result.json times. */
function mostAtOnce(results: Array<{ started_at: string; finished_at: string }>): number {
  const edges = results.flatMap((r) => [
    { t: Date.parse(r.started_at), d: 1 },
    { t: Date.parse(r.finished_at), d: -1 },
  ]);
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.d;
    most = Math.max(most, now);
  }
  return most;
}

describe("--parallel-jobs: the repeats of a group at once", () => {
  const scratch = useScratch("parallel-jobs");

  it("gives the same eight trial folders, rewards and stream records as one job after another", async () => {
    const tasks = await slowHelloTasks(path.join(scratch(), "tasks"), ["sleepy"], 5);
    const one = path.join(scratch(), "jobs-one");
    const eight = path.join(scratch(), "jobs-eight");
    const [a, b] = [
      await bench(runArgs(tasks, one, 1, "group")),
      await bench(runArgs(tasks, eight, 8, "group")),
    ];
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const jobOne = await loadJob(path.join(one, "oracle"));
    const jobEight = await loadJob(path.join(eight, "oracle"));
    const folders = (j: typeof jobOne) =>
      j.trials.map((t) => `${t.job.repeat}/${t.job.name}/${t.task} ${t.reward}`).sort();
    assert.equal(jobEight.trials.length, TRIALS);
    assert.deepEqual(folders(jobEight), folders(jobOne));
    assert.ok(jobEight.trials.every((t) => t.reward === 1));
    assert.deepEqual(await streamed(eight), await streamed(one));
    // One after another never overlaps; eight at once did run side by side.
    const times = (j: typeof jobOne) => j.trials.map(timesOf);
    assert.equal(mostAtOnce(times(jobOne)), 1);
    assert.ok(mostAtOnce(times(jobEight)) >= 2, "the eight jobs ran one after another");
    // Each job's summary is its own, as with one job at a time.
    for (const dir of jobEight.jobDirs) {
      const summary = JSON.parse(await fs.readFile(path.join(dir, "summary.json"), "utf8"));
      assert.equal(summary.total, 1);
    }
  });

  it("one task, -j 2, --trials 4: the --parallel-jobs hint once; with --parallel-jobs 4: at once, printed in repeat order", async () => {
    const tasks = await slowHelloTasks(path.join(scratch(), "tasks-hint"), ["sleepy"], 4);
    const base = ["run", tasks, "-a", "oracle", "--sandbox", "namespace", "--trials", "4", "-j", "2"];
    const serial = await bench([...base, "--jobs-dir", path.join(scratch(), "jobs-hint")]);
    assert.equal(serial.code, 0, serial.stderr);
    const hints = serial.stderr.split("\n").filter((l) => l.includes("--parallel-jobs 4 runs them at once"));
    assert.equal(hints.length, 1, serial.stderr);
    assert.match(hints[0] ?? "", /^note: one task: its 4 repeats run one after another/);
    const jobsDir = path.join(scratch(), "jobs-at-once");
    const atOnce = await bench([...base, "--parallel-jobs", "4", "--jobs-dir", jobsDir]);
    assert.equal(atOnce.code, 0, atOnce.stderr);
    assert.doesNotMatch(atOnce.stderr, /--parallel-jobs 4 runs them at once/);
    // The seed's lines, once each, in repeat order, then the summary.
    const lines = atOnce.stdout.trim().split("\n");
    assert.deepEqual(
      lines.slice(0, 4).map((l) => l.split(/\s+/)[0]),
      ["trial-01", "trial-02", "trial-03", "trial-04"],
    );
    assert.match(lines[4] ?? "", /^4 rollout\(s\): 4 passed/);
    assert.equal(lines.length, 5);
    const job = await loadJob(path.join(jobsDir, "oracle"));
    assert.equal(mostAtOnce(job.trials.map(timesOf)), 4);
  });

  it("--max-concurrent-trials bounds the trials of all the run's jobs at once", async () => {
    const tasks = await slowHelloTasks(path.join(scratch(), "tasks-bounded"), ["sleepy"], 3);
    const jobsDir = path.join(scratch(), "jobs-bounded");
    const run = await bench(runArgs(tasks, jobsDir, 4, "bounded", 4, ["--max-concurrent-trials", "2"]));
    assert.equal(run.code, 0, run.stderr);
    const job = await loadJob(path.join(jobsDir, "oracle"));
    assert.equal(job.trials.length, 4);
    assert.ok(job.trials.every((t) => t.reward === 1));
    // Four jobs at once, but never more than two trials: the run's gate, not each job's -j.
    const times = job.trials.map(timesOf);
    assert.equal(mostAtOnce(times), 2);
  });

  it("after a SIGINT mid-way, a rerun with the same --job-name completes exactly the missing trials", async () => {
    const tasks = await slowHelloTasks(path.join(scratch(), "tasks-resume"), ["sleepy"], 5);
    const jobsDir = path.join(scratch(), "jobs-resume");
    const args = runArgs(tasks, jobsDir, 4, "resumed");
    const child = startBench(args);
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    const finishedNow = async () => {
      const j = await loadJob(path.join(jobsDir, "oracle")).catch(() => null);
      return (j?.trials ?? []).filter((t) => t.resultState === "present" && t.reward === 1);
    };
    await waitUntil(async () => (await finishedNow()).length >= 2, "two trials finished", 300_000);
    child.kill("SIGINT");
    await exited;
    const before = await finishedNow();
    assert.ok(before.length < TRIALS, `every trial finished before the SIGINT: ${stderr}`);

    const rerun = await bench(args);
    assert.equal(rerun.code, 0, rerun.stderr);
    const after = await loadJob(path.join(jobsDir, "oracle"));
    assert.equal(after.trials.length, TRIALS);
    assert.ok(after.trials.every((t) => t.reward === 1));
    assert.deepEqual(
      after.trials.map((t) => t.job.repeat).sort(),
      Array.from({ length: TRIALS }, (_, i) => `trial-0${i + 1}`),
    );
    // What had finished is kept, not run again; only the others are new rollouts.
    const finals = new Set(after.trials.map((t) => t.name));
    for (const t of before) assert.ok(finals.has(t.name), `${t.name} was run again`);
    const all = await loadJob(path.join(jobsDir, "oracle"), { attempts: "all" });
    const rerunNew = all.trials.filter((t) => !t.replaced).length - before.length;
    assert.equal(rerunNew, TRIALS - before.length);
  });
});
