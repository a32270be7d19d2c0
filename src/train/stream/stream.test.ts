import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { RolloutSpec } from "../../jobs-dir/testing/job-builder.js";
import { writeGroup, writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import type { StreamRecord } from "../../schemas/rollout-stream.js";
import { JobProcessGone, StreamTimeout } from "./errors.js";
import { type StreamOptions, streamRollouts } from "./stream.js";

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

async function collect(
  input: string,
  opts: StreamOptions,
): Promise<{ records: StreamRecord[]; error: unknown }> {
  const records: StreamRecord[] = [];
  try {
    for await (const r of streamRollouts(input, opts)) records.push(r);
    return { records, error: null };
  } catch (error) {
    return { records, error };
  }
}

/**
 * --timeout of a stream that follows a fake run: a guard against a hang only, so generous (the
 * fake run is a process of its own, slow to start on a loaded machine).
 */
const HANG_MS = 120_000;

const FAKE_RUN = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "testing", "fake-run.ts");

/** A separate process that plays `bench run`: plans, then each job under its own lock. */
function fakeRun(spec: {
  jobs: Array<{ dir: string; agent?: string; rollouts: Array<RolloutSpec & { retryOf?: string }> }>;
  intervalMs: number;
  hangAfter?: number;
  retryAttempts?: number;
}) {
  const child = spawn(process.execPath, ["--import", "tsx", FAKE_RUN, JSON.stringify(spec)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines: string[] = [];
  child.stdout?.on("data", (d: Buffer) => lines.push(...d.toString().split("\n").filter(Boolean)));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, exited };
}

const r3 = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);
const r2 = (x: number | null) => (x === null ? null : Math.round(x * 100) / 100);

describe("stream --no-follow", () => {
  it("gives the seed's -0.577, 1.155, -0.577 over the folder of three repeat jobs, in repeat order", async () => {
    const root = tmp("bf-stream-");
    const agentDir = path.join(root, "claude-agent-acp");
    writeGroup(root, {
      task: "cryst",
      agent: "claude-agent-acp",
      rewards: [0, 1, 0],
      errors: ["timeout", null, "timeout"],
    });
    const { records, error } = await collect(agentDir, {
      follow: false,
      groupSize: 3,
      groupBy: "task,agent,model",
    });
    assert.equal(error, null);
    assert.deepEqual(
      records.map((r) => r.rollout_path.split("/")[0]),
      ["trial-01", "trial-02", "trial-03"],
    );
    assert.deepEqual(
      records.map((r) => r3(r.advantage)),
      [-0.577, 1.155, -0.577],
    );
    assert.deepEqual(
      records.map((r) => r.error),
      ["timeout", null, "timeout"],
    );
    // outcome is upstream's (scored 0 after a timeout: failed); our category is outcome_category.
    assert.deepEqual(
      records.map((r) => [r.outcome, r.outcome_category]),
      [
        ["failed", "timeout"],
        ["passed", null],
        ["failed", "timeout"],
      ],
    );
    assert.ok(
      records.every(
        (r) =>
          r.group_complete === true &&
          r.in_baseline &&
          r.group_id === "task=cryst|agent=claude-agent-acp|model=vllm/policy",
      ),
    );
    assert.equal(records[0]?.job, "trial-01/2026-01-01__12-00-00");
  });

  it("withheld groups come out with their reason and no advantages; short groups come out incomplete", async () => {
    const root = tmp("bf-stream-");
    writeGroup(root, { task: "a", rewards: [0, 1, null], errors: [null, null, "provider_error"] });
    writeGroup(root, { task: "b", rewards: [1, 0] });
    const { records } = await collect(path.join(root, "bench-agent"), {
      follow: false,
      groupSize: 3,
      groupBy: "task",
    });
    const a = records.filter((r) => r.task === "a");
    const b = records.filter((r) => r.task === "b");
    assert.deepEqual(
      a.map((r) => [r.withheld, r.advantage, r.in_baseline, r.group_complete]),
      Array(3).fill(["unscored_member", null, false, true]),
    );
    assert.equal(a[2]?.reward, null);
    assert.deepEqual(
      b.map((r) => [r.group_complete, r.advantage]),
      [
        [false, null],
        [false, null],
      ],
    );
  });

  it("a finished job's rollout with a missing or cut-short result.json withholds its group", async () => {
    const root = tmp("bf-stream-");
    writeGroup(root, { task: "m", rewards: [1, 0], each: [{}, { result: "missing" }] });
    writeGroup(root, { task: "c", rewards: [1, 0], each: [{ result: "truncated" }] });
    const { records, error } = await collect(root, { follow: false, groupSize: 2, groupBy: "task" });
    assert.equal(error, null);
    const byTask = (t: string) =>
      records.filter((r) => r.task === t).map((r) => [r.result, r.withheld, r.advantage]);
    assert.deepEqual(byTask("m"), [
      ["present", "missing_result", null],
      ["missing", "missing_result", null],
    ]);
    assert.deepEqual(byTask("c"), [
      ["truncated", "truncated_result", null],
      ["present", "truncated_result", null],
    ]);
  });

  it("without --group-size each record has no advantage", async () => {
    const root = tmp("bf-stream-");
    writeGroup(root, { task: "t", rewards: [1, 0], tokens: true });
    const { records } = await collect(root, { follow: false });
    assert.deepEqual(
      records.map((r) => [r.advantage, r.group_complete]),
      [
        [null, null],
        [null, null],
      ],
    );
    assert.equal(records[0]?.token_capture.training_grade, true);
    assert.equal(records[0]?.sequences?.[0]?.completion_mask.length, 5);
  });

  it("a missing folder is bad input", async () => {
    const { error } = await collect(path.join(tmp("bf-stream-"), "nope"), { follow: false });
    assert.match(String(error), /no such folder/);
  });
});

describe("stream following a run", () => {
  it("emits every rollout once, as it finishes, and ends when every planned job finished", async () => {
    const root = tmp("bf-stream-");
    const jobs = [1, 2].map((t) => ({
      dir: path.join(root, "bench-agent", `trial-0${t}`, "job"),
      rollouts: [
        { task: "t", reward: t - 1 },
        { task: "u", reward: 1 },
      ],
    }));
    const run = fakeRun({ jobs, intervalMs: 30 });
    const { records, error } = await collect(path.join(root, "bench-agent"), {
      groupSize: 2,
      groupBy: "task,agent,model",
      pollIntervalMs: 200,
      timeoutMs: HANG_MS,
    });
    assert.equal(error, null);
    assert.equal(await run.exited, 0);
    assert.equal(records.length, 4);
    assert.equal(new Set(records.map((r) => r.rollout_path)).size, 4);
    const t = records.filter((r) => r.task === "t");
    assert.deepEqual(
      t.map((r) => [r.reward, r2(r.advantage)]),
      [
        [0, -0.71],
        [1, 0.71],
      ],
    );
    assert.ok(records.every((r) => r.group_complete));
  });

  it("exits with JobProcessGone when the run's process dies, after the rollouts that finished", async () => {
    const root = tmp("bf-stream-");
    const dir = path.join(root, "job");
    const run = fakeRun({
      jobs: [
        {
          dir,
          rollouts: [
            { task: "t", reward: 1 },
            { task: "u", reward: 1 },
            { task: "v", reward: 1 },
          ],
        },
      ],
      intervalMs: 10,
      hangAfter: 1,
    });
    const records: StreamRecord[] = [];
    let error: unknown = null;
    try {
      for await (const r of streamRollouts(dir, { pollIntervalMs: 100, timeoutMs: HANG_MS })) {
        records.push(r);
        run.child.kill("SIGKILL");
      }
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof JobProcessGone, String(error));
    assert.deepEqual(
      records.map((r) => r.task),
      ["t"],
    );
  });

  it("holds a retry-able failure until its retry replaces it; the replaced attempt is in no group", async () => {
    const root = tmp("bf-stream-");
    const dir = path.join(root, "job");
    const run = fakeRun({
      retryAttempts: 1,
      jobs: [
        {
          dir,
          rollouts: [
            { task: "s", reward: 0 },
            { task: "t", reward: null, error: "sandbox_setup", hex: "0000000a", attempt: 1 },
            { task: "t", reward: 1, hex: "0000000b", attempt: 2, retryOf: "0000000a" },
          ],
        },
      ],
      intervalMs: 300,
    });
    const { records, error } = await collect(dir, {
      groupSize: 2,
      groupBy: "agent",
      pollIntervalMs: 100,
      timeoutMs: HANG_MS,
    });
    await run.exited;
    assert.equal(error, null);
    // The marker lands before the retry does, so the replaced attempt comes out first, on its own.
    assert.equal(records[0]?.rollout, "t__0000000a");
    const retried = records.filter((r) => r.retried);
    assert.deepEqual(
      retried.map((r) => [r.rollout, r.advantage, r.group_complete]),
      [["t__0000000a", null, null]],
    );
    const members = records.filter((r) => !r.retried);
    assert.deepEqual(
      members.map((r) => [r.reward, r2(r.advantage)]),
      [
        [0, -0.71],
        [1, 0.71],
      ],
    );
  });

  it("--timeout ends a stream whose jobs never finish", async () => {
    const root = tmp("bf-stream-");
    const dir = path.join(root, "job");
    writeJob({ dir, state: "running", rollouts: [{ task: "t", reward: 1 }] });
    const { records, error } = await collect(dir, { groupSize: 2, timeoutMs: 300, pollIntervalMs: 50 });
    assert.ok(error instanceof StreamTimeout);
    assert.deepEqual(
      records.map((r) => r.group_complete),
      [false],
    );
  });
});
