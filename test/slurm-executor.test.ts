// --executor slurm on the local cluster of scripts/setup-slurm.sh: n1 and n2 (partition main) each
// in a network and mount namespace of their own that see the shared root, n3 (partition blind) that
// does not. Skipped, saying why, where that cluster is not up.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { bench, slowHelloTasks, startBench, waitUntil } from "./testing/bench.js";
import { clusterMissing, jobsOfRun, oracleRunArgs as runArgs, SHARED_ROOT } from "./testing/slurm.js";

/** The run's arguments without -q, for a test that reads its warnings. */
const loud = (args: string[]) => args.filter((a) => a !== "-q");

const missing = clusterMissing();
if (missing) console.log(`# slurm-executor tests skipped: ${missing}`);

/** Job ids in the queue whose comment names this run's job name. */
const queuedOf = (jobName: string): string[] => jobsOfRun(jobName).map((j) => j.id);

// CI sets the cluster up (.ci/run runs scripts/setup-slurm.sh): there a missing cluster is a failure, not a skip.
it("the local cluster answers in CI", { skip: process.env.CI ? false : "not in CI" }, () => {
  assert.equal(missing, null);
});

describe("--executor slurm on the two-node local cluster", { skip: missing ?? false }, () => {
  let scratch = "";
  before(async () => {
    // Tasks and jobs on the root every node of partition main sees (the nodes see no /tmp of ours).
    await fs.mkdir(SHARED_ROOT, { recursive: true });
    scratch = await fs.mkdtemp(path.join(SHARED_ROOT, "test-"));
  });
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  it("scores a group of 8 over a folder of tasks as the local executor does, on both nodes, with each trial's SLURM job id", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks"), ["sleepy", "second"], 1);
    const group = ["--trials", "8", "--parallel-jobs", "8", "-j", "1"];
    const local = await bench(runArgs(tasks, path.join(scratch, "jobs-local"), "group", group));
    const slurm = await bench(
      runArgs(tasks, path.join(scratch, "jobs-slurm"), "group", [...group, "--executor", "slurm"]),
    );
    assert.equal(local.code, 0, local.stderr);
    assert.equal(slurm.code, 0, slurm.stderr);
    const a = await loadJob(path.join(scratch, "jobs-local", "oracle"));
    const b = await loadJob(path.join(scratch, "jobs-slurm", "oracle"));
    const scored = (j: typeof a) => j.trials.map((t) => `${t.job.repeat}/${t.task} ${t.reward}`).sort();
    assert.equal(b.trials.length, 16);
    assert.deepEqual(scored(b), scored(a));
    const executors = b.trials.map((t) => t.executor);
    for (const e of executors) {
      assert.equal(e?.kind, "slurm");
      assert.match(String(e?.slurm_job_id), /^\d+$/);
    }
    assert.equal(new Set(executors.map((e) => e?.slurm_job_id)).size, 16, "one SLURM job per trial");
    assert.deepEqual([...new Set(executors.map((e) => e?.node))].sort(), ["n1", "n2"]);
    // The local executor records nothing: its result.json is as before.
    for (const t of a.trials) {
      const written = JSON.parse(await fs.readFile(path.join(t.dir, "result.json"), "utf8"));
      assert.ok(!("executor" in written), t.dir);
    }
    assert.deepEqual(queuedOf("group"), []);
  });

  it("refuses at start, naming the node, a partition whose node cannot see the jobs folder", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks-blind"), ["quick"], 0);
    const jobsDir = path.join(scratch, "jobs-blind");
    const run = await bench(
      runArgs(tasks, jobsDir, "blind", ["--executor", "slurm", "--slurm-partition", "blind"]),
    );
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /node\(s\) n3 of partition blind cannot see the jobs folder/);
    assert.match(run.stderr, /--jobs-dir/);
    // Nothing ran: no rollout folder was made.
    const j = await loadJob(path.join(jobsDir, "oracle")).catch(() => null);
    assert.equal(j?.trials.length ?? 0, 0);
  });

  it("refuses at start tasks that live where the nodes cannot see them", async () => {
    // The nodes' /tmp is their own: tasks there are not the host's.
    const local = await fs.mkdtemp(path.join(os.tmpdir(), "bf-slurm-tasks-"));
    try {
      const tasks = await slowHelloTasks(local, ["hidden"], 0);
      const run = await bench(
        runArgs(tasks, path.join(scratch, "jobs-hidden"), "hidden", ["--executor", "slurm"]),
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /cannot see the task folder\(s\)/);
    } finally {
      await fs.rm(local, { recursive: true, force: true });
    }
  });

  it("a trial SLURM will not start ends as infra_error, unscored, after its retries", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks-refused"), ["quick"], 0);
    const jobsDir = path.join(scratch, "jobs-refused");
    const run = await bench(
      runArgs(tasks, jobsDir, "refused", [
        "--executor",
        "slurm",
        "--retry-attempts",
        "1",
        "--slurm-sbatch-arg=--mem=999999999",
      ]),
    );
    assert.equal(run.code, 1, run.stderr);
    const all = await loadJob(path.join(jobsDir, "oracle"), { attempts: "all" });
    assert.equal(all.trials.length, 2, "one try and one retry");
    for (const t of all.trials) {
      assert.equal(t.outcome.errorCategory, "infra_error");
      assert.equal(t.rewards, null);
      assert.match(t.outcome.error ?? "", /sbatch did not take the trial/);
    }
  });

  it("a trial whose SLURM job is cancelled from outside ends as infra_error and is retried", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks-cancel"), ["slow"], 6);
    const jobsDir = path.join(scratch, "jobs-cancel");
    // Not quiet: the retry's warning is what this reads (-q prints only errors and the final lines).
    const child = startBench(loud(runArgs(tasks, jobsDir, "cancelled", ["--executor", "slurm"])));
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    const running = () => jobsOfRun("cancelled", "RUNNING").map((j) => j.id);
    await waitUntil(async () => running().length === 1, "the trial's SLURM job running", 60_000);
    const [first] = running();
    // While it runs, scontrol knows the job by the id result.json records (accounting is off here).
    const shown = execFileSync("scontrol", ["show", "job", "-o", first as string], { encoding: "utf8" });
    assert.match(shown, /\bJobState=RUNNING\b/);
    assert.match(shown, /\bJobName=bf-slow__[0-9a-f]{8}\b/);
    assert.match(shown, /\bComment=benchflow:run=cancelled:host=/);
    execFileSync("scancel", [first as string]);
    assert.equal(await exited, 0, stderr);
    const all = await loadJob(path.join(jobsDir, "oracle"), { attempts: "all" });
    assert.equal(all.trials.length, 2, stderr);
    const cancelled = all.trials.find((t) => t.executor?.slurm_job_id === first);
    assert.ok(cancelled, `no rollout records SLURM job ${first}`);
    assert.equal(cancelled.outcome.errorCategory, "infra_error");
    assert.equal(cancelled.rewards, null, "an infrastructure failure is unscored");
    assert.match(cancelled.outcome.error ?? "", new RegExp(`SLURM job ${first} ended CANCELLED`));
    const replaced = JSON.parse(await fs.readFile(path.join(cancelled.dir, "replaced.json"), "utf8"));
    assert.equal(replaced.reason, "retried");
    const final = await loadJob(path.join(jobsDir, "oracle"));
    assert.equal(final.trials.length, 1);
    assert.equal(final.trials[0]?.reward, 1);
    assert.match(stderr, /infra_error/);
    // Retried on the other node of the partition, not where it was lost.
    assert.ok(cancelled.executor?.node, "the lost attempt records its node");
    assert.notEqual(final.trials[0]?.executor?.node, cancelled.executor?.node);
  });

  it("SIGINT of bench run leaves no job of the run in squeue", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks-sigint"), ["slow"], 30);
    const jobsDir = path.join(scratch, "jobs-sigint");
    const child = startBench(
      runArgs(tasks, jobsDir, "stopped", ["--executor", "slurm", "--trials", "3", "--parallel-jobs", "3"]),
    );
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await waitUntil(async () => queuedOf("stopped").length === 3, "three SLURM jobs queued", 60_000);
    child.kill("SIGINT");
    assert.equal(await exited, 130);
    assert.deepEqual(queuedOf("stopped"), []);
  });

  it("after a SIGKILL of bench run, the rerun cancels the jobs it left and completes the group", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks-killed"), ["slow"], 30);
    const jobsDir = path.join(scratch, "jobs-killed");
    const args = runArgs(tasks, jobsDir, "killed", [
      "--executor",
      "slurm",
      "--trials",
      "2",
      "--parallel-jobs",
      "2",
    ]);
    const child = startBench(args);
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await waitUntil(async () => queuedOf("killed").length === 2, "two SLURM jobs queued", 60_000);
    const left = queuedOf("killed");
    child.kill("SIGKILL");
    await exited;
    assert.deepEqual(queuedOf("killed").sort(), left.sort(), "SIGKILL gave bench no chance to cancel");
    // The rerun's oracle is quick: the leftovers would still be sleeping if they were not reaped. The
    // quick task lives in a folder of its own: a leftover that has not reached its oracle yet reads
    // the first folder's (a rewritten solve.sh there could let it finish before the rerun reaps it).
    const quick = await slowHelloTasks(path.join(scratch, "tasks-killed-quick"), ["slow"], 0);
    const rerun = await bench(
      loud(
        runArgs(quick, jobsDir, "killed", ["--executor", "slurm", "--trials", "2", "--parallel-jobs", "2"]),
      ),
    );
    assert.equal(rerun.code, 0, `${rerun.stderr}\n${rerun.stdout}`);
    assert.match(rerun.stderr, /cancelled 2 SLURM job\(s\) a killed run left behind/);
    for (const id of left) assert.ok(!queuedOf("killed").includes(id), `job ${id} still queued`);
    const done = await loadJob(path.join(jobsDir, "oracle"));
    assert.equal(done.trials.length, 2);
    assert.ok(done.trials.every((t) => t.reward === 1));
    assert.deepEqual(queuedOf("killed"), []);
  });
});
