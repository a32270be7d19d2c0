// `bench train convert --format branch-tree` over a job of four rollouts of one task whose
// conversations (recorded OpenAI chat calls, each agent with its own tool-call ids) part at three
// places, then `bench train validate --format branch-tree` on what it wrote.
//   A: ls -> "a b", cat a -> "x", "answer 1"   reward 1
//   B: ls -> "a b", cat b -> "y", "answer 2"   reward 0
//   C: pwd -> "/w", "answer 3"                  reward 0
//   D: ls -> "a b c" (the tool said more), "answer 4"   reward 1
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../../cli/testing/run-cli.js";
import { writeJob } from "../../jobs-dir/testing/job-builder.js";
import { BranchChildRow, BranchPairRow } from "../../schemas/train-branch-tree.js";

const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));
const TOOLS = [
  {
    type: "function",
    function: {
      name: "bash",
      description: "Run a shell command",
      parameters: { type: "object", properties: { command: { type: "string" } } },
    },
  },
];

type Step = [command: string, output: string];

/** The rollout's calls as the gateway records them: each request holds the history so far. */
function callLines(id: string, steps: Step[], answer: string): string {
  const history: unknown[] = [
    { role: "system", content: "You are a careful agent." },
    { role: "user", content: "Solve the task half-life." },
  ];
  const lines: string[] = [];
  const call = (messages: unknown[], reply: unknown) =>
    JSON.stringify({
      request: {
        method: "POST",
        path: "/v1/chat/completions",
        headers: {},
        body: { model: "vllm/policy", messages, tools: TOOLS },
      },
      response: {
        status_code: 200,
        headers: {},
        body: { choices: [{ index: 0, message: reply, finish_reason: "stop" }] },
      },
      metadata: { call_purpose: "agent", wire: "openai-chat" },
    });
  steps.forEach(([command, output], j) => {
    const callId = `${id}_call_${j}`;
    const reply = {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: callId, type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } },
      ],
    };
    lines.push(call([...history], reply));
    history.push(reply, { role: "tool", tool_call_id: callId, content: output });
  });
  lines.push(call([...history], { role: "assistant", content: answer }));
  return `${lines.join("\n")}\n`;
}

const ROLLOUTS: Array<{ hex: string; reward: number | null; steps: Step[]; answer: string; agent?: string }> =
  [
    {
      hex: "0000000a",
      reward: 1,
      steps: [
        ["ls", "a b"],
        ["cat a", "x"],
      ],
      answer: "answer 1",
    },
    {
      hex: "0000000b",
      reward: 0,
      steps: [
        ["ls", "a b"],
        ["cat b", "y"],
      ],
      answer: "answer 2",
    },
    { hex: "0000000c", reward: 0, steps: [["pwd", "/w"]], answer: "answer 3" },
    { hex: "0000000d", reward: 1, steps: [["ls", "a b c"]], answer: "answer 4" },
    // Unscored: never a silent 0 in a value.
    { hex: "0000000e", reward: null, steps: [["ls", "a b"]], answer: "answer 5" },
  ];

let root = "";
// The repeats are jobs of their own: a tree is the task's rollouts across them.
const BY = ["--group-by", "task,agent,model"];
function bench(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, ...args], { cwd: root, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** The rows written, each checked against its schema (strict: no field more, none missing). */
const rowsOf = (file: string) =>
  fs
    .readFileSync(path.join(root, file), "utf8")
    .trim()
    .split("\n")
    .map((l) => {
      const row = JSON.parse(l);
      (row.kind === "branch_pair" ? BranchPairRow : BranchChildRow).parse(row);
      return row;
    });

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "bf-branch-"));
  // One job per repeat, as `bench run --trials 5` lays them out.
  ROLLOUTS.forEach((r, i) => {
    const [b] = writeJob({
      dir: path.join(root, "jobs", "tree", `trial-0${i + 1}`, "2026-01-01__12-00-00"),
      rollouts: [{ task: "half-life", hex: r.hex, reward: r.reward, calls: 0 }],
    });
    fs.writeFileSync(
      path.join(b?.dir ?? "", "trajectory", "llm_trajectory.jsonl"),
      callLines(r.hex, r.steps, r.answer),
    );
  });
  // The oracle runs the solution without a model: no calls, so no conversation to branch.
  writeJob({
    dir: path.join(root, "jobs", "oracle", "2026-01-01__13-00-00"),
    agent: "oracle",
    rollouts: [{ task: "half-life", hex: "000000f0", reward: 1, calls: 0 }],
  });
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe("bench train convert --format branch-tree", () => {
  it("writes a child row per rollout per fork above it, with value and advantage", () => {
    const r = bench(
      "convert",
      "jobs/tree",
      "--format",
      "branch-tree",
      ...BY,
      "--out",
      "train/tree.jsonl",
      "--manifest",
      "train/tree-stats.json",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      "Converted 9 row(s) from 5 rollout(s) -> train/tree.jsonl\n" +
        "Branch trees: 1; 3 fork(s), 9 child row(s), 0 pair row(s); 0 group(s) without a fork.\n",
    );
    const rows = rowsOf("train/tree.jsonl");
    assert.ok(rows.every((x) => x.kind === "branch_child" && x.schema_version === 2));
    const byDepth = (d: number) => rows.filter((x) => x.depth === d);
    assert.deepEqual(
      [0, 1, 2].map((d) => byDepth(d).length),
      [4, 3, 2],
    );
    const root0 = byDepth(0);
    assert.deepEqual(
      root0.map((x) => [x.label, x.reward, x.value, x.advantage]),
      [
        ["half-life__0000000a", 1, 0.5, 0.5],
        ["half-life__0000000b", 0, 0.5, -0.5],
        ["half-life__0000000c", 0, 0.5, -0.5],
        ["half-life__0000000d", 1, 0.5, 0.5],
      ],
    );
    assert.ok(Math.abs(root0[0].value_stderr - Math.sqrt(1 / 3) / 2) < 1e-12);
    assert.equal(root0[0].prefix.length, 2);
    assert.equal(root0[0].parent_node, null);
    assert.deepEqual(root0[0].tool_names, ["bash"]);
    assert.equal(root0[2].request, 0);
    const a = rows.find((x) => x.depth === 2 && x.label === "half-life__0000000a");
    // Shared: system, user, the ls call and its "a b"; the rest is A's own.
    assert.deepEqual(
      a.prefix.map((m: { role: string }) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.deepEqual(a.continuation.at(-1), { role: "assistant", content: "answer 1" });
    assert.deepEqual(a.messages, [...a.prefix, ...a.continuation]);
    assert.equal(a.value, 0.5);
    assert.equal(a.request, 1);
    assert.equal(a.parent_node, byDepth(1)[0].fork_id);
    assert.equal(byDepth(1)[0].parent_node, root0[0].fork_id);
    assert.ok(Math.abs(byDepth(1)[0].value - 2 / 3) < 1e-12);
    assert.equal(a.fork_kind, "fork");
    assert.equal(a.status, "passed");
    assert.equal(
      a.session,
      path.join("jobs", "tree", "trial-01", "2026-01-01__12-00-00", "half-life__0000000a"),
    );
    assert.ok(!rows.some((x) => x.label === "half-life__0000000e"), "an unscored rollout joined a tree");
    const stats = JSON.parse(fs.readFileSync(path.join(root, "train/tree-stats.json"), "utf8"));
    assert.deepEqual(stats.skipped, { skipped_unscored: 1 });
    assert.equal(stats.forks, 3);

    const v = bench("validate", "train/tree.jsonl", "--format", "branch-tree", "--expected-rows", "9");
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stdout, '{"ok": true, "rows": 9, "rows_with_tool_calls": 9}\n');
  });

  it("--pairs: each two rollouts that part with different rewards, same request unless told", () => {
    const r = bench(
      "convert",
      "jobs/tree",
      "--format",
      "branch-tree",
      ...BY,
      "--pairs",
      "--out",
      "train/pairs.jsonl",
    );
    assert.equal(r.code, 0, r.stderr);
    const pairs = rowsOf("train/pairs.jsonl").filter((x) => x.kind === "branch_pair");
    const names = (x: { chosen_session: string; rejected_session: string }) =>
      `${path.basename(x.chosen_session).slice(-1)}>${path.basename(x.rejected_session).slice(-1)}`;
    assert.deepEqual(pairs.map(names), ["a>c", "d>c", "a>b"]);
    assert.ok(
      pairs.every(
        (x) => x.same_request && x.margin === 1 && x.chosen_reward === 1 && x.rejected_reward === 0,
      ),
    );
    const ab = pairs[2];
    assert.deepEqual(ab.chosen[0].tool_calls[0].function.arguments, JSON.stringify({ command: "cat a" }));
    assert.deepEqual(ab.rejected[0].tool_calls[0].function.arguments, JSON.stringify({ command: "cat b" }));

    const any = bench(
      "convert",
      "jobs/tree",
      "--format",
      "branch-tree",
      ...BY,
      "--pairs",
      "--pairs-any-request",
      "--out",
      "train/any.jsonl",
    );
    assert.equal(any.code, 0, any.stderr);
    const all = rowsOf("train/any.jsonl").filter((x) => x.kind === "branch_pair");
    const db = all.find((x) => names(x) === "d>b");
    assert.equal(db.same_request, false);
    // B's answer to its own ls call now names the ls call of the prompt (D's prefix).
    assert.equal(db.rejected[0].tool_call_id, db.prompt.at(-1).tool_calls[0].id);
    assert.equal(db.chosen[0].content, "a b c");
    assert.equal(bench("validate", "train/any.jsonl", "--format", "branch-tree").code, 0);
  });

  it("oracle rollouts stay out unless --include-oracle, and ours have no conversation anyway", () => {
    const out = (flag: string[]) =>
      bench(
        "convert",
        "jobs",
        "--format",
        "branch-tree",
        "--group-by",
        "task",
        "--out",
        "train/o.jsonl",
        "--manifest",
        "train/o.json",
        ...flag,
      );
    assert.equal(out([]).code, 0);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(root, "train/o.json"), "utf8")).skipped, {
      skipped_oracle: 1,
      skipped_unscored: 1,
    });
    assert.equal(out(["--include-oracle"]).code, 0);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(root, "train/o.json"), "utf8")).skipped, {
      skipped_no_trajectory: 1,
      skipped_unscored: 1,
    });
  });

  it("with job in --group-by every repeat is a tree of one: says so, with the fix", () => {
    const r = bench(
      "convert",
      "jobs/tree",
      "--format",
      "branch-tree",
      "--group-by",
      "task,agent,model,job",
      "--out",
      "train/one.jsonl",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Converted 0 row\(s\) from 5 rollout\(s\)/);
    assert.match(r.stderr, /each trial-NN is a job of its own: leave job out of --group-by/);
  });

  it("refuses the flags branch-tree has no use for, and its own flags elsewhere", () => {
    for (const flags of [
      ["--row-mode", "exchange"],
      ["--group-advantage", "grpo"],
    ]) {
      const r = bench(
        "convert",
        "jobs/tree",
        "--format",
        "branch-tree",
        ...BY,
        "--out",
        "train/x.jsonl",
        ...flags,
      );
      assert.equal(r.code, 2, flags.join(" "));
      assert.match(r.stderr, new RegExp(`does not take ${flags[0]}`));
    }
    const r = bench("convert", "jobs/tree", "--pairs", "--out", "train/x.jsonl");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--pairs applies only to --format branch-tree/);
    assert.ok(!fs.existsSync(path.join(root, "train/x.jsonl")));
  });

  it("validate --format branch-tree names the row that does not hold together", () => {
    const rows = rowsOf("train/tree.jsonl");
    rows[1].advantage = 0.25;
    fs.writeFileSync(
      path.join(root, "train/bad.jsonl"),
      `${rows.map((x) => JSON.stringify(x)).join("\n")}\n`,
    );
    const v = bench("validate", "train/bad.jsonl", "--format", "branch-tree");
    assert.equal(v.code, 1);
    assert.match(v.stderr, /train\/bad\.jsonl line 2: advantage 0\.25 is not reward - value/);
  });
});
