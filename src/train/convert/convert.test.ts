import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { UserInputError } from "../../errors.js";
import { writeGroup } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import type { PrimeSftRow } from "../../schemas/train-rows.js";
import { validateFile } from "../validate/validate.js";
import { convertJob } from "./convert.js";

function readRows(file: string): PrimeSftRow[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

const round3 = (x: number | null | undefined) => (x == null ? x : Math.round(x * 1000) / 1000);

describe("convert with group advantages (the seed's numbers)", () => {
  it("four rollouts all at 1.0 give one group, mean 1, std 0, every advantage 0", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, {
      task: "half-life",
      agent: "opencode",
      model: "deepseek/deepseek-v4-flash",
      rewards: [1, 1, 1, 1],
    });
    const out = path.join(root, "train", "group.jsonl");
    const res = await convertJob({
      jobs: path.join(root, "opencode"),
      out,
      groupAdvantage: "grpo",
      groupBy: "task,agent,model",
    });
    assert.equal(res.rows, 4);
    assert.equal(res.rollouts, 4);
    assert.deepEqual(res.groups?.groups, 1);
    assert.equal(res.groups?.unscored, 0);
    const rows = readRows(out);
    assert.equal(rows.length, 4);
    for (const row of rows) {
      assert.equal(row.advantage, 0);
      // Upstream's fields in upstream's order (reference §5.4): deepEqual ignores order, so the keys too.
      assert.deepEqual(row.group, {
        id: "task=half-life|agent=opencode|model=deepseek/deepseek-v4-flash",
        by: ["task", "agent", "model"],
        key: { task: "half-life", agent: "opencode", model: "deepseek/deepseek-v4-flash" },
        normalisation: "grpo",
        formula:
          "advantage = (reward - mean) / (std + eps); mean and sample std (ddof 1) over the scored rollouts of the group",
        rollouts: 4,
        scored: 4,
        mean: 1,
        std: 0,
        std_ddof: 1,
        eps: 0.0001,
      });
      assert.deepEqual(Object.keys(row.group ?? {}), [
        "id",
        "by",
        "key",
        "normalisation",
        "formula",
        "rollouts",
        "scored",
        "mean",
        "std",
        "std_ddof",
        "eps",
      ]);
      assert.equal(row.outcome, "passed");
      assert.equal(row.outcome_category, null);
      assert.equal(row.in_baseline, true);
    }
  });

  it("rewards 0, 1, 0 with two timeouts give -0.577, 1.155, -0.577 and the timed-out rows carry the error", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, { task: "cryst", rewards: [0, 1, 0], errors: ["timeout", null, "timeout"] });
    const out = path.join(root, "rows.jsonl");
    const manifest = path.join(root, "stats.json");
    const res = await convertJob({
      jobs: path.join(root, "bench-agent"),
      out,
      manifest,
      groupAdvantage: "grpo",
      groupBy: "task,agent,model",
    });
    assert.equal(res.rows, 3);
    const rows = readRows(out);
    assert.deepEqual(
      rows.map((r) => round3(r.advantage)),
      [-0.577, 1.155, -0.577],
    );
    assert.deepEqual(
      rows.map((r) => r.group?.error),
      ["timeout", undefined, "timeout"],
    );
    // outcome is upstream's (a timed-out rollout the verifier scored 0 failed); ours is outcome_category.
    assert.deepEqual(
      rows.map((r) => [r.outcome, r.outcome_category]),
      [
        ["failed", "timeout"],
        ["passed", null],
        ["failed", "timeout"],
      ],
    );
    const m = JSON.parse(fs.readFileSync(manifest, "utf8"));
    // The file splices its long lists in from side files: it must say what the returned manifest says.
    assert.deepEqual(m, res.manifest);
    assert.equal(m.sources.length, 3);
    assert.deepEqual(fs.readdirSync(root).sort(), ["bench-agent", "rows.jsonl", "stats.json"]);
    assert.equal(m.skipped_terminal_error, 0);
    assert.equal(m.training_signal?.groups[0]?.withheld, null);
    assert.equal(m.training_signal?.groups[0]?.members.length, 3);
  });

  it("without --group-advantage the two timed-out rollouts give no row and are counted", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, { task: "cryst", rewards: [0, 1, 0], errors: ["timeout", null, "timeout"] });
    const out = path.join(root, "rows.jsonl");
    const manifest = path.join(root, "stats.json");
    const res = await convertJob({ jobs: path.join(root, "bench-agent"), out, manifest });
    assert.equal(res.rows, 1);
    assert.equal(res.rollouts, 3);
    const m = JSON.parse(fs.readFileSync(manifest, "utf8"));
    assert.deepEqual(m, res.manifest);
    assert.equal(m.skipped_terminal_error, 2);
    assert.equal(m.training_signal, null);
    assert.equal(readRows(out)[0]?.in_baseline, false);
  });

  it("loo gives each rollout its reward minus the mean of the others", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, { task: "t", rewards: [0, 0.5, 1] });
    const out = path.join(root, "rows.jsonl");
    await convertJob({ jobs: root, out, groupAdvantage: "loo", groupBy: ["task", "agent", "model"] });
    assert.deepEqual(
      readRows(out).map((r) => r.advantage),
      [-0.75, 0, 0.75],
    );
  });

  it("--min-reward drops only its own rows; the mean still counts them", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, { task: "t", rewards: [0, 1] });
    const out = path.join(root, "rows.jsonl");
    const res = await convertJob({
      jobs: root,
      out,
      groupAdvantage: "grpo",
      groupBy: "task,agent,model",
      minReward: 1,
    });
    const rows = readRows(out);
    assert.equal(res.rows, 1);
    assert.equal(rows[0]?.reward, 1);
    assert.equal(rows[0]?.group?.mean, 0.5);
    assert.equal(res.manifest.skipped_reward, 1);
  });
});

describe("formats and row modes", () => {
  for (const wire of ["openai-chat", "openai-responses", "anthropic-messages"] as const) {
    it(`${wire} rollouts give rows that validate, tool calls kept, in every format`, async () => {
      const root = tmp("bf-convert-");
      writeGroup(root, { task: "t", rewards: [0, 1], wire, calls: 4 });
      for (const format of ["prime-sft", "trl-sft"] as const) {
        for (const rowMode of ["rollout", "exchange"] as const) {
          const out = path.join(root, `${format}-${rowMode}.jsonl`);
          const res = await convertJob({
            jobs: root,
            out,
            format,
            rowMode,
            groupAdvantage: "grpo",
            groupBy: "task",
          });
          assert.equal(res.rows, rowMode === "rollout" ? 2 : 8, `${format} ${rowMode}`);
          // Every call either answers with a tool call or carries earlier ones in its history.
          const report = await validateFile(out, { requireToolCalls: true });
          assert.equal(report.ok, true, JSON.stringify(report.errors));
          assert.equal(report.rows_with_tool_calls, res.rows);
        }
      }
    });
  }

  it("tokens: one merged sequence per conversation; a broken prefix is not training-grade, with the reason", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, {
      task: "t",
      rewards: [0, 1, 1],
      tokens: true,
      calls: 3,
      each: [{}, {}, { tokens: "broken" }],
    });
    const out = path.join(root, "tokens.jsonl");
    const res = await convertJob({
      jobs: root,
      out,
      format: "tokens",
      groupAdvantage: "grpo",
      groupBy: "task",
    });
    assert.equal(res.rows, 2);
    assert.equal(res.manifest.skipped_not_training_grade, 1);
    assert.match(
      res.manifest.not_training_grade[0]?.reason ?? "",
      /call 1's prompt does not begin with call 0's/,
    );
    const rows = readRows(out) as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(rows[0]?.completion_mask, [1, 1, 0, 1, 1, 0, 1, 1]);
    assert.equal(rows[0]?.kind, "agent");
    // Advantages count the not-training-grade rollout: it is scored, so it is in the baseline.
    assert.equal((rows[0]?.group as { scored: number } | undefined)?.scored, 3);
    assert.equal((await validateFile(out)).ok, true);
  });

  it("group-by policy_version and task_digest split groups", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, {
      task: "t",
      rewards: [0, 1, 1, 0],
      // No group identity (older results, upstream's): the versions the calls name are the key.
      identity: false,
      each: [0, 0, 1, 1].map((v) => ({ calls: [{ policyVersion: `v${v}` }, { policyVersion: `v${v}` }] })),
    });
    const res = await convertJob({
      jobs: root,
      out: path.join(root, "r.jsonl"),
      groupAdvantage: "grpo",
      groupBy: "task,policy_version,task_digest",
    });
    assert.deepEqual(
      res.manifest.training_signal?.groups.map((g) => g.id),
      ["task=t|policy_version=v0|task_digest=sha256:t", "task=t|policy_version=v1|task_digest=sha256:t"],
    );
  });
});

describe("bad input gives a clear error and keeps what was written", () => {
  it("a broken JSONL line is named by file and line", async () => {
    const root = tmp("bf-convert-");
    const [first] = writeGroup(root, { task: "t", rewards: [1, 0] });
    const file = path.join(first?.dir ?? "", "trajectory", "llm_trajectory.jsonl");
    fs.appendFileSync(file, '{"request": {"body": \n');
    const out = path.join(root, "rows.jsonl");
    fs.writeFileSync(out, "previous rows\n");
    await assert.rejects(
      convertJob({ jobs: path.join(root, "bench-agent"), out, groupAdvantage: "grpo" }),
      (err: Error) =>
        err instanceof UserInputError &&
        err.message.startsWith(`${path.join(root, "bench-agent", "trial-01")}`) &&
        /llm_trajectory.jsonl: line 3: invalid JSON: /.test(err.message),
    );
    assert.equal(fs.readFileSync(out, "utf8"), "previous rows\n");
    assert.deepEqual(
      fs.readdirSync(root).filter((f) => f.endsWith(".tmp")),
      [],
    );
  });

  it("an unknown --group-by key", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, { task: "t", rewards: [1] });
    await assert.rejects(
      convertJob({
        jobs: root,
        out: path.join(root, "r.jsonl"),
        groupAdvantage: "grpo",
        groupBy: "task,seed",
      }),
      /^UserInputError: groupBy: unknown key "seed"/,
    );
  });

  it("--out equal to an input", async () => {
    const root = tmp("bf-convert-");
    const [r] = writeGroup(root, { task: "t", rewards: [1] });
    const input = path.join(r?.dir ?? "", "trajectory", "llm_trajectory.jsonl");
    const before = fs.readFileSync(input, "utf8");
    await assert.rejects(
      convertJob({ jobs: root, out: input }),
      /^UserInputError: out .* is one of the inputs/,
    );
    await assert.rejects(
      convertJob({ jobs: root, out: root }),
      /^UserInputError: out .* is one of the inputs/,
    );
    assert.equal(fs.readFileSync(input, "utf8"), before);
  });

  it("--expected-rows fails before writing", async () => {
    const root = tmp("bf-convert-");
    writeGroup(root, { task: "t", rewards: [1, 1] });
    const out = path.join(root, "r.jsonl");
    await assert.rejects(
      convertJob({ jobs: root, out, expectedRows: 3 }),
      /gives 2 row\(s\); nothing was written/,
    );
    assert.equal(fs.existsSync(out), false);
  });
});
