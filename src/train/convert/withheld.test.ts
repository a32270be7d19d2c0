import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { writeGroup, writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import type { ManifestGroup } from "../../schemas/train-manifest.js";
import { convertJob } from "./convert.js";

/** Converts with grpo by task,agent,model and returns the rows and the one group of the manifest. */
async function convertOne(root: string) {
  const out = path.join(root, "out", "rows.jsonl");
  const res = await convertJob({
    jobs: path.join(root, "bench-agent"),
    out,
    groupAdvantage: "grpo",
    groupBy: "task,agent,model",
  });
  const rows = fs
    .readFileSync(out, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const groups = res.manifest.training_signal?.groups ?? [];
  assert.equal(groups.length, 1);
  return { res, rows, group: groups[0] as ManifestGroup };
}

describe("a group is withheld whole when a member has no score or never reached the model", () => {
  it("unscored member", async () => {
    const root = tmp("bf-withheld-");
    writeGroup(root, { task: "t", rewards: [0, 1, null], errors: [null, null, "provider_error"] });
    const { res, rows, group } = await convertOne(root);
    assert.equal(rows.length, 0);
    assert.equal(group.withheld, "unscored_member");
    assert.deepEqual(group.withheld_outcomes, ["provider_error"], "the manifest names the failure");
    assert.deepEqual(
      group.members.map((m) => m.advantage),
      [null, null, null],
    );
    assert.deepEqual(
      group.members.map((m) => m.in_baseline),
      [false, false, false],
    );
    assert.equal(group.members[2]?.withheld_reason, "unscored_member");
    assert.equal(res.groups?.unscored, 1);
    assert.deepEqual(res.groups?.withheld, { unscored_member: 1 });
    assert.equal(res.manifest.skipped_withheld_group, 3);
  });

  it("missing result.json: the rollout still belongs to its group, by folder name and plan", async () => {
    const root = tmp("bf-withheld-");
    writeGroup(root, { task: "t", rewards: [0, 1, 1], each: [{}, {}, { result: "missing" }] });
    const { rows, group } = await convertOne(root);
    assert.equal(rows.length, 0);
    assert.equal(group.withheld, "missing_result");
    assert.equal(group.id, "task=t|agent=bench-agent|model=vllm/policy");
    assert.equal(group.rollouts, 3);
    assert.equal(group.members[2]?.result, "missing");
  });

  it("truncated result.json", async () => {
    const root = tmp("bf-withheld-");
    writeGroup(root, { task: "t", rewards: [0, 1, 1], each: [{ result: "truncated" }] });
    const warnings: string[] = [];
    const out = path.join(root, "rows.jsonl");
    const res = await convertJob({
      jobs: root,
      out,
      groupAdvantage: "grpo",
      groupBy: "task,agent,model",
      onWarning: (m) => warnings.push(m),
    });
    assert.equal(res.rows, 0);
    assert.equal(res.manifest.training_signal?.groups[0]?.withheld, "truncated_result");
    assert.match(warnings[0] ?? "", /trial-01\/.*result.json: not valid JSON/);
  });

  it("no model calls (oracle and nop runs)", async () => {
    const root = tmp("bf-withheld-");
    writeGroup(root, { task: "t", agent: "oracle", model: null, rewards: [1, 1], calls: 0 });
    const out = path.join(root, "rows.jsonl");
    const res = await convertJob({ jobs: root, out, groupAdvantage: "grpo", groupBy: "task,agent,model" });
    assert.equal(res.rows, 0);
    assert.equal(res.manifest.training_signal?.groups[0]?.withheld, "no_model_calls");
    assert.equal(res.manifest.training_signal?.groups[0]?.id, "task=t|agent=oracle|model=null");
  });

  it("every call failed", async () => {
    const root = tmp("bf-withheld-");
    writeGroup(root, {
      task: "t",
      rewards: [0, 1],
      each: [{}, { calls: [{ status: 502 }, { status: 500 }] }],
    });
    const { rows, group } = await convertOne(root);
    assert.equal(rows.length, 0);
    assert.equal(group.withheld, "all_calls_failed");
  });

  it("a group with one scored rollout keeps its row but gives no advantage", async () => {
    const root = tmp("bf-withheld-");
    writeGroup(root, { task: "t", rewards: [0.5] });
    const { res, rows, group } = await convertOne(root);
    assert.equal(rows[0]?.advantage, null);
    assert.equal(rows[0]?.group.excluded, "single_scored_rollout");
    assert.equal(group.withheld, null);
    assert.equal(res.groups?.singleScored, 1);
  });
});

describe("an attempt replaced by a retry is in no group", () => {
  it("with a replaced.json marker", async () => {
    const dir = path.join(tmp("bf-withheld-"), "job");
    const built = writeJob({
      dir,
      retryAttempts: 1,
      rollouts: [
        {
          task: "t",
          reward: null,
          error: "sandbox_setup",
          replacedBy: "t__0000000b",
          hex: "0000000a",
          attempt: 1,
        },
        { task: "t", reward: 1, hex: "0000000b", attempt: 2 },
        { task: "u", reward: 0, hex: "0000000c" },
      ],
    });
    const out = path.join(dir, "..", "rows.jsonl");
    const res = await convertJob({ jobs: dir, out, groupAdvantage: "grpo", groupBy: "agent,model" });
    assert.equal(res.rollouts, 2);
    assert.equal(res.rows, 2);
    assert.equal(res.manifest.skipped_retried, 1);
    assert.deepEqual(
      res.manifest.retried.map((r) => [r.rollout, r.replaced_by]),
      [[built[0]?.name, "t__0000000b"]],
    );
    const g = res.manifest.training_signal?.groups[0];
    assert.equal(g?.rollouts, 2);
    assert.deepEqual(
      g?.members.map((m) => m.rollout),
      ["t__0000000b", "u__0000000c"],
    );
  });

  it("without markers, upstream's rule: in an evaluation job the scored attempt first, then the newest", async () => {
    const dir = path.join(tmp("bf-withheld-"), "job");
    writeJob({
      dir,
      rollouts: [
        { task: "t", reward: null, error: "infra_error", hex: "000000a1", startedAt: "2026-01-01T12:00:00Z" },
        { task: "t", reward: 0, hex: "000000a2", startedAt: "2026-01-01T12:01:00Z" },
        { task: "t", reward: null, error: "infra_error", hex: "000000a3", startedAt: "2026-01-01T12:02:00Z" },
      ],
    });
    const res = await convertJob({ jobs: dir, out: path.join(dir, "..", "r.jsonl"), groupAdvantage: "grpo" });
    assert.equal(res.rollouts, 1);
    assert.deepEqual(res.manifest.retried.map((r) => r.rollout).sort(), ["t__000000a1", "t__000000a3"]);
    assert.equal(res.manifest.training_signal?.groups[0]?.withheld, null);
  });

  it("rollouts of a folder that is not an evaluation job are samples, never replaced", async () => {
    const dir = path.join(tmp("bf-withheld-"), "batch");
    writeJob({
      dir,
      state: "bare",
      rollouts: [
        { task: "t", reward: 0 },
        { task: "t", reward: 1 },
      ],
    });
    const res = await convertJob({ jobs: dir, out: path.join(dir, "..", "r.jsonl"), groupAdvantage: "loo" });
    assert.equal(res.rows, 2);
    assert.equal(res.manifest.skipped_retried, 0);
  });
});
