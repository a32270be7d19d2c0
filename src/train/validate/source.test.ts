// validate's source flags through the real CLI: upstream's example, then each failure.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { benchTrain } from "../../cli/testing/run-cli.js";
import { writeJob, writeJson } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { writeUpstreamRollout } from "../../jobs-dir/testing/upstream-rollout.js";

describe("validate --source-jobs", () => {
  it("adds source_health (upstream's test_train_validate_source_health_requirements), sort_keys JSON", () => {
    const root = tmp();
    writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__abc123"));
    let r = benchTrain(root, "convert", "jobs", "--out", "train.jsonl", "--expected-rows", "1");
    assert.equal(r.code, 0, r.stderr);
    writeJson(path.join(root, "tasks.json"), {
      schema_version: 1,
      tasks: [{ task_id: "task-a", path: "tasks/task-a", digest: "sha256:x" }],
    });
    r = benchTrain(
      root,
      "validate",
      "train.jsonl",
      "--source-jobs",
      "jobs",
      "--expected-rows",
      "1",
      "--require-llm-trajectory",
      "--require-tool-calls",
      "--task-manifest",
      "tasks.json",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      '{"ok": true, "rows": 1, "rows_with_tool_calls": 1, "source_health": {"malformed_llm_trajectory": 0, ' +
        '"missing_llm_trajectory": 0, "rows_with_tool_calls": 1, "scored_rows": 1, "total_rows": 1, ' +
        '"unscored_rows": 0}, "task_manifest_rows": 1}\n',
    );
  });

  it("fails when a source rollout has no tool call, or a missing or malformed llm_trajectory.jsonl", () => {
    const root = tmp();
    writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__abc123"));
    const r0 = benchTrain(root, "convert", "jobs", "--out", "train.jsonl");
    assert.equal(r0.code, 0, r0.stderr);
    // A second rollout: unscored, no tool calls, its trajectory cut mid-line.
    const bad = writeUpstreamRollout(path.join(root, "jobs", "run", "task-b__def456"), {
      task_name: "task-b",
      rewards: null,
      n_tool_calls: 0,
    });
    fs.appendFileSync(path.join(bad, "trajectory", "llm_trajectory.jsonl"), '{"request":\n');
    let r = benchTrain(root, "validate", "train.jsonl", "--source-jobs", "jobs", "--require-tool-calls");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not all source rows contain tool calls: 1 \/ 2/);
    const health = JSON.parse(r.stdout).source_health;
    assert.deepEqual(
      [health.total_rows, health.scored_rows, health.unscored_rows, health.malformed_llm_trajectory],
      [2, 1, 1, 1],
    );
    r = benchTrain(root, "validate", "train.jsonl", "--source-jobs", "jobs", "--require-llm-trajectory");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /missing\/malformed llm_trajectory\.jsonl: 0 missing, 1 malformed of 2/);
    fs.rmSync(path.join(bad, "trajectory", "llm_trajectory.jsonl"));
    r = benchTrain(root, "validate", "train.jsonl", "--source-jobs", "jobs", "--require-llm-trajectory");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /1 missing, 0 malformed of 2/);
  });

  it("with --source-canonical-selection: counts the selected rows and checks only them", () => {
    const root = tmp();
    const good = writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__abc123"));
    writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__def456"), { n_tool_calls: 0 });
    writeJson(path.join(root, "sel.json"), {
      job_dir: "jobs/run",
      selected: [{ rollout_dir: path.basename(good) }],
    });
    const r0 = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "train.jsonl",
      "--canonical-selection",
      "sel.json",
    );
    assert.equal(r0.code, 0, r0.stderr);
    const r = benchTrain(
      root,
      "validate",
      "train.jsonl",
      "--source-jobs",
      "jobs",
      "--source-canonical-selection",
      "sel.json",
      "--require-tool-calls",
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.canonical_selected_rows, 1);
    assert.equal(out.source_health.total_rows, 1);
  });

  it("names a task manifest without a tasks list, counts a selection as listed, refuses --require-llm-trajectory alone", () => {
    const root = tmp();
    writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__abc123"));
    benchTrain(root, "convert", "jobs", "--out", "train.jsonl");
    writeJson(path.join(root, "tasks.json"), { tasks: {} });
    let r = benchTrain(root, "validate", "train.jsonl", "--task-manifest", "tasks.json");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /tasks\.json: "tasks" must be a list/);
    // Without --source-jobs a selection is counted as listed: its rollouts need not be on this machine.
    writeJson(path.join(root, "sel.json"), {
      selected: [{ rollout_dir: "/elsewhere/a" }, { rollout_dir: "/elsewhere/b" }],
    });
    r = benchTrain(root, "validate", "train.jsonl", "--source-canonical-selection", "sel.json");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).canonical_selected_rows, 2);
    r = benchTrain(root, "validate", "train.jsonl", "--require-llm-trajectory");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /give --source-jobs DIR too/);
  });

  it("with --format tokens: names each source rollout masked for want of trusted token ids", () => {
    const root = tmp();
    writeJob({
      dir: path.join(root, "jobs", "run"),
      rollouts: [
        { task: "t-good", tokens: true, calls: 3, hex: "aaaa0001" },
        { task: "t-bad", tokens: "broken", calls: 3, hex: "aaaa0002" },
      ],
    });
    const r0 = benchTrain(root, "convert", "jobs", "--format", "tokens", "--out", "rows.jsonl");
    assert.equal(r0.code, 0, r0.stderr);
    let r = benchTrain(root, "validate", "rows.jsonl", "--format", "tokens", "--source-jobs", "jobs");
    assert.equal(r.code, 0, r.stderr);
    const masking = JSON.parse(r.stdout).token_masking;
    assert.deepEqual([masking.rollouts, masking.training_grade_rollouts, masking.masked_rollouts], [2, 1, 1]);
    assert.match(masking.masked[0].rollout_dir, /t-bad__aaaa0002$/);
    assert.match(masking.masked[0].reason, /call 1's prompt does not begin with call 0's/);
    assert.match(r.stderr, /note: .*t-bad__aaaa0002: masked, no tokens row \(call 1's prompt/);
    r = benchTrain(
      root,
      "validate",
      "rows.jsonl",
      "--format",
      "tokens",
      "--source-jobs",
      "jobs",
      "--require-training-grade",
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /1 of 2 source rollout\(s\) are not training-grade/);
    r = benchTrain(root, "validate", "rows.jsonl", "--require-training-grade");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--require-training-grade checks the source rollouts: give --source-jobs DIR too/);
  });
});
