// A run that stopped starting rollouts (summary.json `stopped`: the endpoint kept failing, or a
// configuration error) is an infrastructure end for a stream that follows it, with the counts a
// trainer needs: the rollouts that failed at the endpoint, the user or the task, and the planned
// ones that never started.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { writeJob, writePlan } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import type { StreamRecord } from "../../schemas/rollout-stream.js";
import type { StreamEnd } from "./end.js";
import { JobProcessGone, RunStopped } from "./errors.js";
import { type StreamOptions, streamRollouts } from "./stream.js";

const STOP = {
  reason: "endpoint_failing",
  message: "http://127.0.0.1:9/v1: connection refused, 3 rollouts in a row",
};
const FAKE_RUN = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "testing", "fake-run.ts");

async function follow(input: string, opts: StreamOptions = {}) {
  const records: StreamRecord[] = [];
  let end: StreamEnd | null = null;
  let error: unknown = null;
  try {
    for await (const r of streamRollouts(input, {
      pollIntervalMs: 50,
      // A guard against a hang only, so generous: the fake run is slow to start on a loaded machine.
      timeoutMs: 120_000,
      ...opts,
      onEnd: (e) => (end = e),
    }))
      records.push(r);
  } catch (err) {
    error = err;
  }
  return { records, end: end as StreamEnd | null, error };
}

/** trial-01 ran and stopped; trial-02 never started (a summary with total 0, every task not started). */
function stoppedRun(root: string): void {
  writeJob({
    dir: path.join(root, "trial-01", "j"),
    rollouts: [
      { task: "a", reward: 1 },
      { task: "b", reward: null, error: "provider_error" },
      { task: "c", reward: null, error: "task_error" },
    ],
    summary: { total: 3, not_started: 1, stopped: STOP },
  });
  writeJob({
    dir: path.join(root, "trial-02", "j"),
    rollouts: [],
    summary: { not_started: 4, stopped: STOP },
  });
}

describe("stream over a run that stopped starting rollouts", () => {
  it("following: every record, then RunStopped (a JobProcessGone, exit 1) naming the reason", async () => {
    const root = tmp("bf-stream-stop-");
    stoppedRun(root);
    const { records, end, error } = await follow(root);
    assert.deepEqual(
      records.map((r) => [r.task, r.outcome_category]),
      [
        ["a", null],
        ["b", "provider_error"],
        ["c", "task_error"],
      ],
    );
    assert.ok(error instanceof RunStopped, String(error));
    assert.ok(error instanceof JobProcessGone);
    assert.equal(error.exitCode, 1);
    assert.match(
      error.message,
      /stopped starting trials \(endpoint_failing: .*connection refused.*\); 5 planned trial\(s\) not started/,
    );
    assert.equal(end?.notStarted, 5);
    assert.deepEqual(
      [end?.rollouts, end?.outcomes.provider_error, end?.outcomes.task_error, end?.outcomes.config_error],
      [3, 1, 1, 0],
    );
    assert.equal(end?.stopped?.reason, "endpoint_failing");
  });

  it("a job still waiting for its turn once the run stopped counts its planned tasks as not started", async () => {
    const root = tmp("bf-stream-stop-");
    writeJob({
      dir: path.join(root, "trial-01", "j"),
      rollouts: [{ task: "a", reward: null, error: "config_error" }],
      summary: { not_started: 1, stopped: { reason: "config_error", message: "401 from the endpoint" } },
    });
    writePlan({ dir: path.join(root, "trial-02", "j"), rollouts: [] }, ["a", "b"]);
    const { end, error } = await follow(root);
    assert.ok(error instanceof RunStopped, String(error));
    assert.deepEqual([end?.outcomes.config_error, end?.notStarted], [1, 3]);
  });

  it("--no-follow: no error, the same counts", async () => {
    const root = tmp("bf-stream-stop-");
    stoppedRun(root);
    const { records, end, error } = await follow(root, { follow: false });
    assert.equal(error, null);
    assert.equal(records.length, 3);
    assert.deepEqual(
      [end?.notStarted, end?.outcomes.provider_error, end?.stopped?.reason],
      [5, 1, "endpoint_failing"],
    );
  });

  it("a run that finished without stopping ends the stream cleanly, nothing not started", async () => {
    const root = tmp("bf-stream-stop-");
    writeJob({ dir: path.join(root, "trial-01", "j"), rollouts: [{ task: "a", reward: 1 }] });
    const { end, error } = await follow(root);
    assert.equal(error, null);
    assert.deepEqual([end?.rollouts, end?.notStarted, end?.stopped], [1, 0, null]);
  });

  it("following a live run that stops: the stream ends with RunStopped once the run writes its summaries", async () => {
    const root = tmp("bf-stream-stop-");
    const jobs = [
      {
        dir: path.join(root, "trial-01", "j"),
        rollouts: [
          { task: "a", reward: 1 },
          { task: "b", reward: null, error: "provider_error" },
        ],
        summary: { not_started: 1, stopped: STOP },
      },
      // Never started: whether the stream sees its summary or only its plan, three tasks did not start.
      {
        dir: path.join(root, "trial-02", "j"),
        rollouts: [],
        plannedTasks: ["a", "b", "c"],
        summary: { not_started: 3, stopped: STOP },
      },
    ];
    const child = spawn(
      process.execPath,
      ["--import", "tsx", FAKE_RUN, JSON.stringify({ jobs, intervalMs: 20 })],
      {
        stdio: "ignore",
      },
    );
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const { records, end, error } = await follow(root);
    await exited;
    assert.ok(error instanceof RunStopped, String(error));
    assert.deepEqual(
      records.map((r) => r.outcome_category),
      [null, "provider_error"],
    );
    assert.equal(end?.notStarted, 4);
  });
});
