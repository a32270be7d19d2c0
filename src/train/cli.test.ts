import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../cli/testing/run-cli.js";
import { writeGroup, writeJob } from "../jobs-dir/testing/job-builder.js";

const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));
let root = "";

/** `bench train ...` as its own process, run in `root` so paths are as a user types them. */
function bench(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, ...args], { cwd: root, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "bf-cli-"));
  writeGroup(path.join(root, "jobs", "group"), {
    task: "half-life",
    agent: "opencode",
    model: "deepseek/deepseek-v4-flash",
    rewards: [1, 1, 1, 1],
  });
  writeGroup(path.join(root, "jobs", "skills"), {
    task: "crystallographic-wyckoff-position-analysis",
    agent: "claude-agent-acp",
    rewards: [0, 1, 0],
    errors: ["timeout", null, "timeout"],
  });
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe("bench train (the seed's console lines)", () => {
  it("convert prints the two lines, with the output path as typed", () => {
    const r = bench(
      "convert",
      "jobs/group/opencode",
      "--out",
      "train/group.jsonl",
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      "Converted 4 row(s) from 4 rollout(s) -> train/group.jsonl\n" +
        "Groups (grpo, by task,agent,model): 1; 0 unscored rollout(s) left out of every baseline.\n",
    );
  });

  it("validate prints the seed's line byte for byte", () => {
    const r = bench("validate", "train/group.jsonl");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"ok": true, "rows": 4, "rows_with_tool_calls": 4}\n');
  });

  it("convert without --group-advantage counts the rollouts that ended with an error", () => {
    const r = bench(
      "convert",
      "jobs/skills/claude-agent-acp",
      "--out",
      "train/skills.jsonl",
      "--manifest",
      "stats.json",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "Converted 1 row(s) from 3 rollout(s) -> train/skills.jsonl\n");
    assert.match(fs.readFileSync(path.join(root, "stats.json"), "utf8"), /"skipped_terminal_error": 2,/);
  });

  it("convert appends a clause only for counts that are not zero", () => {
    const r = bench(
      "convert",
      "jobs/skills/claude-agent-acp",
      "--out",
      "train/x.jsonl",
      "--group-advantage",
      "loo",
      // Upstream's default: each trial-NN job a group of one, so the single-scored clause shows.
      "--group-by",
      "task,agent,model,job",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout.split("\n")[1],
      "Groups (loo, by task,agent,model,job): 3; 0 unscored rollout(s) left out of every baseline; 3 group(s) with one scored rollout (no advantage).",
    );
  });

  it("stream --no-follow --group-size 3 prints one JSON record per rollout; --format text the seed's columns", () => {
    const args = [
      "stream",
      "jobs/skills/claude-agent-acp",
      "--no-follow",
      "--group-size",
      "3",
      "--group-by",
      "task,agent,model",
    ];
    const r = bench(...args);
    assert.equal(r.code, 0, r.stderr);
    const records = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      records.map((x) => Math.round(x.advantage * 1000) / 1000),
      [-0.577, 1.155, -0.577],
    );
    assert.match(r.stderr, /bench train stream: 3 rollouts streamed/);
    const text = bench(...args, "--format", "text").stdout.split("\n");
    assert.match(
      text[0] ?? "",
      /^trial-01\/.*\/crystallographic-wyckoff-position-analysis__[0-9a-f]{8} {3}reward 0\.0 {2}advantage -0\.577/,
    );
    assert.match(text[1] ?? "", /^trial-02\/.*__[0-9a-f]{8} {3}reward 1\.0 {2}advantage {2}1\.155$/);
  });
});

describe("bench train exit codes", () => {
  it("2 for an unknown --group-by key, naming the flag", () => {
    const r = bench(
      "convert",
      "jobs/group",
      "--out",
      "x.jsonl",
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,version",
    );
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /--group-by: unknown key "version"; use some of task, agent, model, task_digest, job, policy_version/,
    );
  });

  it("2 for --out equal to an input", () => {
    const r = bench("convert", "jobs/group", "--out", "jobs/group");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--out jobs\/group is one of the inputs/);
  });

  it("1 when validate finds a row without tool calls under --require-tool-calls", () => {
    writeGroup(path.join(root, "jobs", "chat"), { task: "chat", rewards: [1], calls: 1 });
    assert.equal(bench("convert", "jobs/chat", "--out", "train/chat.jsonl").code, 0);
    const r = bench("validate", "train/chat.jsonl", "--require-tool-calls");
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '{"errors": 1, "ok": false, "rows": 1, "rows_with_tool_calls": 0}\n');
    assert.match(r.stderr, /not all rows contain tool calls: 0 \/ 1/);
  });

  it("1 when the run stopped starting rollouts; the end line counts what a trainer must not read as rewards", () => {
    const stopped = { reason: "endpoint_failing", message: "http://127.0.0.1:9/v1 answered 500" };
    writeJob({
      dir: path.join(root, "halted", "trial-01", "j"),
      rollouts: [
        { task: "a", reward: null, error: "provider_error" },
        { task: "b", reward: null, error: "task_error" },
        { task: "c", reward: 1 },
      ],
      summary: { not_started: 2, stopped },
    });
    writeJob({
      dir: path.join(root, "halted", "trial-02", "j"),
      rollouts: [],
      summary: { not_started: 3, stopped },
    });
    const r = bench("stream", "halted", "--poll-interval", "0.05");
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout.trim().split("\n").length, 3);
    assert.match(
      r.stderr,
      /the run stopped starting trials \(endpoint_failing: http:\/\/127\.0\.0\.1:9\/v1 answered 500\)/,
    );
    assert.match(
      r.stderr,
      /bench train stream: 3 rollouts streamed; 1 provider_error, 0 config_error, 1 task_error, 5 not started\n/,
    );
    const once = bench("stream", "halted", "--no-follow");
    assert.equal(once.code, 0, once.stderr);
  });

  it("1 when the run's process is gone, 3 on --timeout", () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    writeJob({
      dir: path.join(root, "died"),
      state: "running",
      lockPid: Number(dead.stdout),
      rollouts: [{ task: "t", reward: 1 }],
    });
    const gone = bench("stream", "died", "--poll-interval", "0.05");
    assert.equal(gone.code, 1, gone.stderr);
    assert.equal(gone.stdout.trim().split("\n").length, 1);
    assert.match(gone.stderr, /died before it finished/);
    writeJob({ dir: path.join(root, "running"), state: "running", rollouts: [{ task: "t", reward: 1 }] });
    const slow = bench("stream", "running", "--timeout", "0.3", "--poll-interval", "0.05");
    assert.equal(slow.code, 3, slow.stderr);
  });
});
