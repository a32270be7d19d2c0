// `bench doctor` says whether --executor slurm works from here: on the local cluster of
// scripts/setup-slurm.sh, partition main sees the shared jobs folder and partition blind does not.
// Without sinfo, it says so with the fix. Cluster cases skipped where the cluster is not up.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bench } from "./testing/bench.js";
import { clusterMissing, SHARED_ROOT } from "./testing/slurm.js";

const missing = clusterMissing();
if (missing) console.log(`# slurm-doctor cluster tests skipped: ${missing}`);

describe("bench doctor: --executor slurm", () => {
  it("says SLURM is not installed, with the fix, where sinfo is not on PATH", async () => {
    const run = await bench(["doctor"], { env: { PATH: "/nonexistent" } });
    assert.match(run.stdout, /FAIL {2}slurm \(sinfo\) +sinfo is not installed here/);
    assert.match(run.stdout, /fix: .*scripts\/setup-slurm\.sh/);
    assert.match(run.stdout, /--executor slurm: unavailable/);
  });

  it("works for a jobs folder every node of the partition sees", { skip: missing ?? false }, async () => {
    const run = await bench(["doctor", "--jobs-dir", SHARED_ROOT]);
    assert.match(run.stdout, /ok {4}slurm srun \+ jobs folder +an srun on n1, n2 saw/);
    assert.match(run.stdout, /--executor slurm: works/);
  });

  it("names the node that cannot see the jobs folder", { skip: missing ?? false }, async () => {
    const run = await bench(["doctor", "--jobs-dir", SHARED_ROOT, "--slurm-partition", "blind"]);
    assert.match(
      run.stdout,
      /FAIL {2}slurm srun \+ jobs folder .*node\(s\) n3 of partition blind cannot see/,
    );
    assert.match(run.stdout, /--executor slurm: unavailable/);
  });
});
