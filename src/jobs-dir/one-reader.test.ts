// The run side (loadJob, resume) and the train side (convert, stream) read a job folder through
// src/jobs-dir, so they agree on which attempt is final and on its outcome, even where file order,
// mtimes and missing categories would pull readers apart.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { finalAttempt, needsRun, scanAttempts } from "../job/attempts.js";
import type { StreamRecord } from "../schemas/rollout-stream.js";
import { convertJob } from "../train/convert/convert.js";
import { streamRollouts } from "../train/stream/stream.js";
import { loadJob } from "./load-job.js";
import { type RolloutSpec, writeJob } from "./testing/job-builder.js";
import { tmp } from "./testing/tmp.js";

/** What every reader says is the final attempt of `task` and its outcome. */
async function verdicts(jobDir: string, task: string) {
  const loaded = (await loadJob(jobDir)).trials.filter((t) => t.task === task);
  assert.equal(loaded.length, 1, "loadJob lists one final attempt per rollout");
  const resumed = finalAttempt((await scanAttempts(jobDir)).get(task) ?? []);
  const streamed: StreamRecord[] = [];
  for await (const r of streamRollouts(jobDir, { follow: false })) if (r.task === task) streamed.push(r);
  const followed: StreamRecord[] = [];
  for await (const r of streamRollouts(jobDir, { timeoutMs: 10_000 })) if (r.task === task) followed.push(r);
  const out = path.join(tmp("bf-one-reader-out-"), "rows.jsonl");
  const converted = await convertJob({ jobs: jobDir, out, groupAdvantage: "grpo" });
  const live = (records: StreamRecord[]) => records.filter((r) => !r.retried);
  return {
    loadJob: [loaded[0]?.name, loaded[0]?.outcome.category],
    resume: [resumed?.name, resumed ? needsRun(resumed) : null],
    stream: live(streamed).map((r) => [r.rollout, r.outcome_category]),
    follow: live(followed).map((r) => [r.rollout, r.outcome_category]),
    convertRetried: converted.manifest.retried.map((r) => r.rollout).sort(),
  };
}

/** Sets a rollout folder's mtime, as `cp -r` without -p does (to the copy's time). */
function touch(dir: string, epochSec: number): void {
  fs.utimesSync(dir, epochSec, epochSec);
}

function job(rollouts: RolloutSpec[]): { dir: string; names: string[] } {
  const dir = path.join(tmp("bf-one-reader-"), "oracle", "trial-01", "job");
  const built = writeJob({ dir, rollouts, agent: "oracle" });
  return { dir, names: built.map((b) => b.name) };
}

describe("one reader of the jobs directory", () => {
  it("the older attempt with the newer mtime (a cp -r) and an error without a category: every reader picks attempt 2, agent_error", async () => {
    const { dir, names } = job([
      {
        task: "probe",
        hex: "0000000a",
        attempt: 1,
        startedAt: "2026-01-01T12:00:00.000Z",
        reward: null,
        errorMessage: "agent exited 1",
      },
      {
        task: "probe",
        hex: "0000000b",
        attempt: 2,
        startedAt: "2026-01-01T12:10:00.000Z",
        reward: null,
        errorMessage: "agent exited 1 again",
      },
    ]);
    const [older, newer] = names.map((n) => path.join(dir, n)) as [string, string];
    touch(newer, 1_700_000_000);
    touch(older, 1_800_000_000);
    const v = await verdicts(dir, "probe");
    assert.deepEqual(v, {
      loadJob: ["probe__0000000b", "agent_error"],
      resume: ["probe__0000000b", false],
      stream: [["probe__0000000b", "agent_error"]],
      follow: [["probe__0000000b", "agent_error"]],
      convertRetried: ["probe__0000000a"],
    });
    const all = await loadJob(dir, { attempts: "all" });
    assert.deepEqual(
      all.trials.map((t) => [t.name, t.replaced !== null, t.outcome.errorCategory]),
      [
        ["probe__0000000a", true, "agent_error"],
        ["probe__0000000b", false, "agent_error"],
      ],
    );
  });

  it("a scored attempt stands over a later unscored one, in every reader", async () => {
    const { dir } = job([
      { task: "t", hex: "0000000a", attempt: 1, reward: 0.5 },
      { task: "t", hex: "0000000b", attempt: 2, reward: null, error: "sandbox_setup" },
    ]);
    const v = await verdicts(dir, "t");
    assert.deepEqual(v.loadJob, ["t__0000000a", null]);
    assert.deepEqual(v.resume, ["t__0000000a", false]);
    assert.deepEqual(v.stream, [["t__0000000a", null]]);
    assert.deepEqual(v.convertRetried, ["t__0000000b"]);
  });

  it("replaced.json wins over every other rule; a verifier error without a category is verifier_failure", async () => {
    const { dir } = job([
      { task: "t", hex: "0000000a", attempt: 2, reward: 1, replacedBy: "t__0000000b" },
      { task: "t", hex: "0000000b", attempt: 1, reward: null },
    ]);
    // The final attempt names a verifier error but no category: still unscored for a reason.
    const file = path.join(dir, "t__0000000b", "result.json");
    const result = JSON.parse(fs.readFileSync(file, "utf8"));
    fs.writeFileSync(file, JSON.stringify({ ...result, verifier_error: "no reward file" }));
    const v = await verdicts(dir, "t");
    assert.deepEqual(v.loadJob, ["t__0000000b", "verifier_failure"]);
    assert.deepEqual(v.resume, ["t__0000000b", false]);
    assert.deepEqual(v.stream, [["t__0000000b", "verifier_failure"]]);
    assert.deepEqual(v.convertRetried, ["t__0000000a"]);
  });

  it("an attempt cut short is final when it is the newest, and resume runs the rollout again", async () => {
    const { dir } = job([
      { task: "t", hex: "0000000a", attempt: 1, reward: null, error: "interrupted" },
      { task: "t", hex: "0000000b", result: "missing" },
    ]);
    // No result: no attempt number or start time, so the folder times decide.
    touch(path.join(dir, "t__0000000a"), 1_700_000_000);
    touch(path.join(dir, "t__0000000b"), 1_800_000_000);
    const v = await verdicts(dir, "t");
    assert.deepEqual(v.loadJob, ["t__0000000b", null]);
    assert.deepEqual(v.resume, ["t__0000000b", true]);
    assert.deepEqual(v.stream, [["t__0000000b", null]]);
  });
});
