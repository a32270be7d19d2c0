// A trial that fills its disk, forks without end or allocates without end, in the namespace
// sandbox: it stays within its limits and is scored, while its sibling at -j 2 scores 1.0.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { useScratch } from "./testing/bench.js";
import { assertHogContained, HOGS, hogTasks, runHogJob } from "./testing/limits.js";

const scratch = useScratch("limits-sib-ns");

describe("limits in the namespace sandbox", () => {
  for (const hog of HOGS) {
    it(`a trial that ${hog.name.replace("-", " ")} stays within ${hog.limit} and is scored; its sibling scores 1.0`, {
      timeout: 300_000,
    }, async (t) => {
      if (process.getuid?.() !== 0) return t.skip("cgroups and the disk cap need root");
      const tasks = await hogTasks(path.join(scratch(), hog.name, "tasks"), hog);
      const jobs = path.join(scratch(), hog.name, "jobs");
      const run = await runHogJob(tasks, jobs, "namespace");
      assert.equal(run.code, 0, run.stderr);
      const config = await assertHogContained(jobs, hog);
      assert.equal(config.limits[hog.limit].exceeded, true, JSON.stringify(config.limits));
    });
  }
});
