// `bench run --trials 4` writes trial-01..04, each a job of its own. The default grouping (the run's
// identity) puts them in one group; with job in an explicit --group-by (upstream's default) every
// group holds one rollout and none gets an advantage. Convert and stream say so in one line with the
// fix, and only when leaving job out would merge groups.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { convertJob } from "../../train/convert/convert.js";
import { streamRollouts } from "../../train/stream/stream.js";
import { writeGroup, writeJob } from "../testing/job-builder.js";
import { tmp } from "../testing/tmp.js";

// Called from code, the fix names the library's option (the command's flag is in exit-codes.test.ts).
const FIX = /each trial-NN is a job of its own\. Leave job out of groupBy \(groupBy: "task,agent,model"\)/;

async function convertWarnings(jobs: string, groupBy?: string): Promise<string[]> {
  const warnings: string[] = [];
  await convertJob({
    jobs,
    out: path.join(tmp("bf-split-out-"), "rows.jsonl"),
    groupAdvantage: "grpo",
    ...(groupBy ? { groupBy } : {}),
    onWarning: (m) => warnings.push(m),
  });
  return warnings;
}

async function streamWarnings(jobs: string, groupBy?: string): Promise<string[]> {
  const warnings: string[] = [];
  const opts = { follow: false, groupSize: 4, onWarning: (m: string) => warnings.push(m) };
  for await (const _ of streamRollouts(jobs, groupBy ? { ...opts, groupBy } : opts));
  return warnings;
}

describe("every group of one because job is in --group-by", () => {
  /** The --trials 4 shape: <root>/bench-agent/trial-01..04/<job>/half-life__<hex>/. */
  function repeats4(): string {
    const root = tmp("bf-split-");
    writeGroup(root, { task: "half-life", rewards: [0, 1, 1, 0] });
    return path.join(root, "bench-agent");
  }

  it("convert: the default groups the four repeats; upstream's task,agent,model,job names the fix once", async () => {
    const jobs = repeats4();
    assert.deepEqual(await convertWarnings(jobs), []);
    const out = path.join(tmp("bf-split-out-"), "rows.jsonl");
    const res = await convertJob({ jobs, out, groupAdvantage: "grpo" });
    assert.equal(res.groups?.groups, 1);
    const warnings = await convertWarnings(jobs, "task,agent,model,job");
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(warnings[0] ?? "", /^every group has one rollout, so none gets an advantage: /);
    assert.match(warnings[0] ?? "", FIX);
    assert.deepEqual(await convertWarnings(jobs, "task,agent,model"), []);
  });

  it("stream --group-size 4: quiet by default and without job; with job it names the fix", async () => {
    const jobs = repeats4();
    assert.deepEqual(await streamWarnings(jobs), []);
    const warnings = await streamWarnings(jobs, "task,agent,model,job");
    assert.equal(warnings.filter((w) => FIX.test(w)).length, 1, warnings.join("\n"));
    assert.deepEqual(await streamWarnings(jobs, "task,agent,model"), []);
  });

  it("is quiet when groups of one differ by more than their job: leaving job out merges nothing", async () => {
    const root = tmp("bf-split-");
    writeGroup(root, { task: "a", rewards: [1] });
    writeGroup(root, { task: "b", rewards: [0] });
    // trial-01 holds both a and b: each task's group has one rollout, and dropping job keeps it so.
    assert.deepEqual(await convertWarnings(path.join(root, "bench-agent"), "task,agent,model,job"), []);
  });

  it("is quiet when some group already has more than one rollout", async () => {
    const root = tmp("bf-split-");
    // A folder without job files (bf.run_batch's) holds samples, not attempts of one rollout.
    writeJob({
      dir: path.join(root, "trial-01", "j"),
      state: "bare",
      rollouts: [{ task: "t" }, { task: "t", reward: 0 }],
    });
    writeJob({ dir: path.join(root, "trial-02", "j"), rollouts: [{ task: "t" }] });
    assert.deepEqual(await convertWarnings(root, "task,agent,model,job"), []);
  });
});
