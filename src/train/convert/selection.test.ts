// --canonical-selection through the real CLI: upstream's example, and the rule that the selection
// comes before groups and --min-reward.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { benchTrain, readRows } from "../../cli/testing/run-cli.js";
import { writeGroup, writeJson } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { writeUpstreamRollout } from "../../jobs-dir/testing/upstream-rollout.js";

describe("convert --canonical-selection", () => {
  it("converts only the selected rollout (upstream's test_train_convert_accepts_canonical_selection)", () => {
    const root = tmp();
    const selected = writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__good"));
    writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__ignored"));
    writeJson(path.join(root, "canonical-selection.json"), {
      job_dir: path.join(root, "jobs", "run"),
      selected: [{ task_id: "task-a", rollout_dir: selected }],
    });
    const r = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "train.jsonl",
      "--canonical-selection",
      "canonical-selection.json",
      "--expected-rows",
      "1",
      "--manifest",
      "m.json",
    );
    assert.equal(r.code, 0, r.stderr);
    const rows = readRows(path.join(root, "train.jsonl"));
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.source_rollout_dir, path.join("jobs", "run", "task-a__good"));
    const m = JSON.parse(fs.readFileSync(path.join(root, "m.json"), "utf8"));
    assert.equal(m.rollouts_seen, 1, "the rollout left out is counted nowhere");
  });

  it("groups only the selected rollouts, and --min-reward does not move the baseline", () => {
    const root = tmp();
    const built = writeGroup(path.join(root, "jobs"), { task: "t", rewards: [0, 1, 1, 0.5] });
    const dirOf = (i: number) => (built[i] as { dir: string }).dir;
    // Keeps rewards 0 and 1: one folder as typed from here, one below the selection's job_dir.
    writeJson(path.join(root, "sel.json"), {
      job_dir: path.dirname(dirOf(1)),
      selection: [{ rollout_dir: path.relative(root, dirOf(0)) }, { rollout_dir: path.basename(dirOf(1)) }],
    });
    const r = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "rows.jsonl",
      "--canonical-selection",
      "sel.json",
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
      "--min-reward",
      "1",
    );
    assert.equal(r.code, 0, r.stderr);
    const rows = readRows(path.join(root, "rows.jsonl"));
    assert.equal(rows.length, 1);
    const group = rows[0]?.group as { rollouts: number; scored: number; mean: number };
    assert.deepEqual([group.rollouts, group.scored, group.mean], [2, 2, 0.5]);
    assert.ok(Math.abs((rows[0]?.advantage as number) - 0.5 / (Math.SQRT1_2 + 1e-4)) < 1e-12);
  });

  it("fails, writing nothing, on a selection that names a rollout without result.json or outside the path", () => {
    const root = tmp();
    writeUpstreamRollout(path.join(root, "jobs", "run", "task-a__good"));
    const other = writeUpstreamRollout(path.join(root, "elsewhere", "run", "task-a__other"));
    writeJson(path.join(root, "gone.json"), { selected: [{ rollout_dir: "jobs/run/task-a__gone" }] });
    let r = benchTrain(root, "convert", "jobs", "--out", "a.jsonl", "--canonical-selection", "gone.json");
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /gone\.json: selected row 1: the rollout jobs\/run\/task-a__gone has no result\.json/,
    );
    writeJson(path.join(root, "other.json"), { selected: [{ rollout_dir: other }] });
    r = benchTrain(root, "convert", "jobs", "--out", "a.jsonl", "--canonical-selection", "other.json");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /other\.json: 1 selected rollout\(s\) are not under jobs/);
    fs.writeFileSync(path.join(root, "list.json"), JSON.stringify({ selected: "all" }));
    r = benchTrain(root, "convert", "jobs", "--out", "a.jsonl", "--canonical-selection", "list.json");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /"selected" \(or "selection"\) must be a list/);
    r = benchTrain(root, "convert", "jobs", "--out", "a.jsonl", "--canonical-selection", "none.json");
    assert.equal(r.code, 2);
    assert.ok(!fs.existsSync(path.join(root, "a.jsonl")));
  });
});
