// loadJob's counts: final attempts per outcome category (replaced attempts count in none), and the
// planned rollouts a stopped run never started, from each job's summary.json.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { loadJob } from "./load-job.js";
import { writeJob } from "./testing/job-builder.js";
import { tmp } from "./testing/tmp.js";

const STOP = {
  reason: "endpoint_failing",
  message: "http://127.0.0.1:9/v1 answered 500 to 3 rollouts in a row",
};

describe("loadJob counts", () => {
  it("per outcome category over final attempts, and not_started summed over the jobs' summaries", async () => {
    const root = path.join(tmp("bf-load-counts-"), "bench-agent");
    writeJob({
      dir: path.join(root, "trial-01", "j"),
      rollouts: [
        { task: "a", hex: "0000000a", reward: null, error: "provider_error", replacedBy: "a__0000000b" },
        { task: "a", hex: "0000000b", reward: null, error: "provider_error" },
        { task: "b", reward: null, error: "task_error" },
        { task: "c", reward: 1 },
        { task: "d", reward: null, verifierError: "verifier_failure" },
        { task: "e", reward: 0, error: "timeout" },
      ],
    });
    writeJob({
      dir: path.join(root, "trial-02", "j"),
      rollouts: [{ task: "a", reward: null, error: "config_error" }],
      summary: {
        not_started: 4,
        stopped: { reason: "config_error", message: "the endpoint refused the key (401)" },
      },
    });
    // A job the run never started: a summary with total 0, every task not started.
    writeJob({
      dir: path.join(root, "trial-03", "j"),
      rollouts: [],
      summary: { not_started: 5, stopped: STOP },
    });
    const job = await loadJob(root);
    const { outcomes, ...rest } = job.counts;
    assert.deepEqual(rest, { rollouts: 6, scored: 2, clean: 1, noResult: 0, notStarted: 9 });
    assert.deepEqual(
      Object.entries(outcomes).filter(([, n]) => n > 0),
      [
        ["timeout", 1],
        ["provider_error", 1],
        ["config_error", 1],
        ["task_error", 1],
        ["verifier_failure", 1],
      ],
    );
    assert.equal(outcomes.agent_setup, 0, "every category is present, 0 when none");
    assert.deepEqual(
      job.stopped.map((s) => [path.relative(root, s.jobDir), s.reason]),
      [
        ["trial-02/j", "config_error"],
        ["trial-03/j", "endpoint_failing"],
      ],
    );
    assert.equal(job.jobDirs.length, 3, "the job that never started is still one of the jobs");
    assert.equal((await loadJob(root, { attempts: "all" })).counts.outcomes.provider_error, 1);
  });

  it("counts a result that is missing or cut short apart from the outcomes", async () => {
    const root = tmp("bf-load-cut-");
    writeJob({
      dir: path.join(root, "j"),
      rollouts: [
        { task: "a", result: "missing" },
        { task: "b", result: "truncated" },
      ],
    });
    const { counts } = await loadJob(root);
    assert.deepEqual([counts.rollouts, counts.noResult, counts.clean, counts.scored], [2, 2, 0, 0]);
  });
});
