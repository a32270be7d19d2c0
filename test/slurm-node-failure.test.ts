// A node that dies under a running trial, on the local cluster: its slurmd, the job's slurmstepd and
// the trial's processes are killed at once (what a power cut leaves), slurmctld marks the node down
// after SlurmdTimeout (15 s here) and ends the job NODE_FAIL. The rollout must be an infrastructure
// failure, unscored, retried on the other node; the node is brought back for the tests after this one.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { REPO, slowHelloTasks, startBench, waitUntil } from "./testing/bench.js";
import { clusterMissing, jobsOfRun, oracleRunArgs, SHARED_ROOT } from "./testing/slurm.js";

const missing = clusterMissing();
if (missing) console.log(`# slurm-node-failure test skipped: ${missing}`);

/** Everything of node `node` that a dead machine would take with it (this run's trial, not another's). */
function killNode(node: string, jobId: string, jobsDir: string): void {
  execFileSync("sh", [
    "-c",
    // slurmd first, so nothing reports the job's end; then the job's step daemon and every process under it.
    `kill -9 "$(cat /run/slurmd-${node}.pid)"
     for p in $(pgrep -f "slurmstepd: \\[${jobId}\\."); do kill -9 $(pgrep -P "$p") "$p" 2>/dev/null; done
     pkill -9 -f "${jobsDir}/.*/\\.slurm/" 2>/dev/null; true`,
  ]);
}

describe("--executor slurm: a node dies under a trial", { skip: missing ?? false }, () => {
  let scratch = "";
  let killed: string | null = null;
  before(async () => {
    await fs.mkdir(SHARED_ROOT, { recursive: true });
    scratch = await fs.mkdtemp(path.join(SHARED_ROOT, "test-node-failure-"));
  });
  after(async () => {
    // The node comes back (setup-slurm.sh restarts a dead slurmd; ReturnToService=2 takes it back).
    if (killed) execFileSync("bash", [path.join(REPO, "scripts/setup-slurm.sh")], { stdio: "ignore" });
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it("ends the trial as an infrastructure failure and retries it on the other node", async () => {
    const tasks = await slowHelloTasks(path.join(scratch, "tasks"), ["slow"], 20);
    const jobsDir = path.join(scratch, "jobs");
    const child = startBench(oracleRunArgs(tasks, jobsDir, "nodefail", ["--executor", "slurm"]));
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await waitUntil(
      async () => jobsOfRun("nodefail", "RUNNING").length === 1,
      "the trial's job running",
      60_000,
    );
    const [first] = jobsOfRun("nodefail", "RUNNING");
    assert.ok(first?.node, "squeue names the node");
    killed = first.node;
    killNode(first.node, first.id, jobsDir);
    // The retry need not sleep: the lost attempt is dead, what matters is where and how it ends.
    await slowHelloTasks(path.join(scratch, "tasks"), ["slow"], 0);
    assert.equal(await exited, 0, stderr);
    const all = await loadJob(path.join(jobsDir, "oracle"), { attempts: "all" });
    const lost = all.trials.find((t) => t.executor?.slurm_job_id === first.id);
    assert.ok(lost, `no rollout records SLURM job ${first.id}`);
    assert.equal(lost.outcome.errorCategory, "infra_error", lost.outcome.error ?? "");
    assert.equal(lost.rewards, null, "an infrastructure failure is unscored, never 0");
    assert.match(lost.outcome.error ?? "", /NODE_FAIL/);
    const final = await loadJob(path.join(jobsDir, "oracle"));
    assert.equal(final.trials.length, 1);
    assert.equal(final.trials[0]?.reward, 1);
    assert.notEqual(final.trials[0]?.executor?.node, first.node, "retried on the other node");
  });
});
