// The run's one SLURM poller, on the local cluster: a job SLURM does not know (one purged after it
// ended looks the same: squeue answers "Invalid job id") resolves instead of being waited on forever.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { JobWatcher } from "../src/job/slurm/watcher.js";
import { clusterMissing } from "./testing/slurm.js";

const missing = clusterMissing();
if (missing) console.log(`# slurm-watcher tests skipped: ${missing}`);

describe("JobWatcher", { skip: missing ?? false }, () => {
  it("resolves a job SLURM no longer knows", async () => {
    const end = await new JobWatcher(50).wait("987654321");
    assert.equal(end.state, "UNKNOWN");
  });

  it("resolves a finished job with its state and node, one squeue for several jobs", async () => {
    const submit = (node: string) =>
      execFileSync("sbatch", ["--parsable", "-w", node, "-o", "/dev/null", "--wrap", "true"], {
        encoding: "utf8",
        cwd: "/",
      }).trim();
    const watcher = new JobWatcher(100);
    const [a, b] = await Promise.all([watcher.wait(submit("n1")), watcher.wait(submit("n2"))]);
    assert.deepEqual([a.state, a.node], ["COMPLETED", "n1"]);
    assert.deepEqual([b.state, b.node], ["COMPLETED", "n2"]);
  });
});
