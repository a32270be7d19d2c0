// The fork hog in the container sandbox next to its sibling at -j 2 (pids are the engine's). The
// memory and disk hogs are test/container-limits.test.ts's, with their own sibling.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { useScratch } from "./testing/bench.js";
import { assertHogContained, HOGS, hogTasks, runHogJob } from "./testing/limits.js";

const scratch = useScratch("limits-ct");

describe("limits in the container sandbox", () => {
  for (const hog of HOGS.filter((h) => h.limit === "pids")) {
    it(`a trial that ${hog.name.replace("-", " ")} stays within ${hog.limit} and is scored; its sibling scores 1.0`, {
      timeout: 400_000,
    }, async (t) => {
      if (!(await engineOrSkip(t))) return;
      const tasks = await hogTasks(path.join(scratch(), hog.name, "tasks"), hog);
      const jobs = path.join(scratch(), hog.name, "jobs");
      const run = await runHogJob(tasks, jobs, "container");
      assert.equal(run.code, 0, run.stderr);
      const config = await assertHogContained(jobs, hog);
      assert.equal(config.limits[hog.limit].exceeded, true, JSON.stringify(config.limits));
    });
  }
});
