// The train commands' exit codes and words, as upstream's: 1 when the data has a problem (a malformed
// trajectory, a row count that is not the one asked for, a failed validation), 2 for usage (a bad
// flag value, a path that is not there). Upstream's test_train_convert_rejects_malformed_llm_jsonl
// asks for exit 1, "invalid JSON" in the output, and no output file.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../cli/testing/run-cli.js";
import { writeGroup } from "../jobs-dir/testing/job-builder.js";

const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));
let root = "";

function bench(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, ...args], { cwd: root, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "bf-exit-"));
  writeGroup(path.join(root, "jobs", "good"), { task: "t", rewards: [0, 1, 1, 0] });
  const [broken] = writeGroup(path.join(root, "jobs", "broken"), { task: "t", rewards: [1] });
  fs.appendFileSync(path.join(broken?.dir ?? "", "trajectory", "llm_trajectory.jsonl"), '{"request":\n');
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

describe("bench train convert exit codes", () => {
  it("1 for a malformed llm_trajectory.jsonl, in upstream's words, writing nothing", () => {
    const r = bench("convert", "jobs/broken", "--out", "train/broken.jsonl", "--expected-rows", "1");
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /llm_trajectory\.jsonl: line 3: invalid JSON: /);
    assert.equal(fs.existsSync(path.join(root, "train", "broken.jsonl")), false);
  });

  it("1 when --expected-rows does not match, writing nothing", () => {
    const r = bench("convert", "jobs/good", "--out", "train/good.jsonl", "--expected-rows", "3");
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /--expected-rows 3: the conversion gives 4 row\(s\); nothing was written/);
    assert.equal(fs.existsSync(path.join(root, "train", "good.jsonl")), false);
  });

  it("2 for a bad flag value or a path that is not there", () => {
    assert.equal(bench("convert", "jobs/good", "--out", "x.jsonl", "--format", "sft").code, 2);
    assert.equal(bench("convert", "jobs/good", "--out", "x.jsonl", "--expected-rows", "many").code, 2);
    const missing = bench("convert", "jobs/nowhere", "--out", "x.jsonl");
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /jobs\/nowhere: no such folder/);
    assert.equal(bench("convert", "jobs/good").code, 2, "--out is required");
  });

  it("without --group-by the trial-NN jobs form their run's group; upstream's task,agent,model,job warns once with the fix", () => {
    const quiet = bench("convert", "jobs/good", "--out", "train/run.jsonl", "--group-advantage", "grpo");
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /trial-NN/);
    const r = bench(
      "convert",
      "jobs/good",
      "--out",
      "train/split.jsonl",
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model,job",
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split("\n").filter((l) => l.includes("trial-NN"));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? "", /^bench train convert: warning: every group has one rollout/);
    assert.match(lines[0] ?? "", /Leave job out of --group-by \(--group-by task,agent,model\)/);
  });
});

describe("bench train validate exit codes and output", () => {
  it("--format trl-sft names its format in the line, as upstream's does (sort_keys JSON)", () => {
    assert.equal(bench("convert", "jobs/good", "--out", "train/trl.jsonl", "--format", "trl-sft").code, 0);
    const r = bench("validate", "train/trl.jsonl", "--format", "trl-sft");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"format": "trl-sft", "ok": true, "rows": 4, "rows_with_tool_calls": 4}\n');
    const prime = bench("validate", "train/trl.jsonl");
    assert.equal(prime.stdout, '{"ok": true, "rows": 4, "rows_with_tool_calls": 4}\n');
  });

  it("1 for a line that is not JSON and for a row count that does not match; 2 for no such file", () => {
    fs.writeFileSync(path.join(root, "bad.jsonl"), "{not json\n");
    const bad = bench("validate", "bad.jsonl");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /bad\.jsonl line 1: invalid JSON: /);
    assert.equal(bench("validate", "train/trl.jsonl", "--expected-rows", "5").code, 1);
    assert.equal(bench("validate", "nowhere.jsonl").code, 2);
  });
});

describe("bench train stream --follow", () => {
  it("--follow is accepted and is the default; --no-follow scans once", () => {
    const follow = bench("stream", "jobs/good", "--follow", "--timeout", "30");
    assert.equal(follow.code, 0, follow.stderr);
    assert.equal(follow.stdout.trim().split("\n").length, 4);
    const once = bench("stream", "jobs/good", "--no-follow");
    assert.equal(once.code, 0, once.stderr);
    assert.equal(once.stdout, follow.stdout);
  });
});
