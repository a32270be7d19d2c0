// Claude Code subagents through the real CLI: a rollout whose llm_trajectory.jsonl holds the
// parent's calls, a subagent's and a helper call, in the Anthropic Messages shape Claude Code sends.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { benchTrain, readRows } from "../../cli/testing/run-cli.js";
import { writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";

const INSTRUCTION = "Write the list of files in /app to /app/files.txt.";
const PROMPT = "List the files in /app and report their names.";
const tool = (name: string) => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: "object", properties: {} },
});
const PARENT_TOOLS = [tool("Bash"), tool("Agent")];
const SUB_TOOLS = [tool("Bash")];
const SPAWN = {
  type: "tool_use",
  id: "toolu_spawn",
  name: "Agent",
  input: { description: "List files", prompt: PROMPT, subagent_type: "general-purpose" },
};
const LS = { type: "tool_use", id: "toolu_ls", name: "Bash", input: { command: "ls /app" } };

function call(messages: unknown[], tools: unknown[], reply: unknown[]) {
  return {
    request: {
      method: "POST",
      path: "/v1/messages",
      body: { model: "claude-sonnet-4-5", system: "You are Claude Code.", messages, tools },
    },
    response: { status_code: 200, body: { type: "message", role: "assistant", content: reply } },
    metadata: { call_purpose: "agent" },
  };
}

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const result = (id: string, text: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: text }],
});

/** parent spawns, subagent runs ls, a tool-less helper, subagent reports, parent finishes. */
function calls(subagentFirst = PROMPT) {
  return [
    call([user(INSTRUCTION)], PARENT_TOOLS, [SPAWN]),
    call([user(subagentFirst)], SUB_TOOLS, [LS]),
    call([user("Summarise: a web page")], [], [{ type: "text", text: "A summary." }]),
    call([user(subagentFirst), { role: "assistant", content: [LS] }, result("toolu_ls", "a\nb")], SUB_TOOLS, [
      { type: "text", text: "Files: a, b" },
    ]),
    call(
      [user(INSTRUCTION), { role: "assistant", content: [SPAWN] }, result("toolu_spawn", "Files: a, b")],
      PARENT_TOOLS,
      [{ type: "text", text: "Done." }],
    ),
  ];
}

function rollout(lines: unknown[], acp: unknown[] = []): string {
  const root = tmp();
  const [built] = writeJob({
    dir: path.join(root, "jobs", "job"),
    agent: "claude-code",
    rollouts: [{ task: "files", calls: 1 }],
  });
  const dir = built?.dir as string;
  const jsonl = (xs: unknown[]) => xs.map((x) => `${JSON.stringify(x)}\n`).join("");
  fs.writeFileSync(path.join(dir, "trajectory", "llm_trajectory.jsonl"), jsonl(lines));
  fs.writeFileSync(
    path.join(dir, "trajectory", "acp_trajectory.jsonl"),
    jsonl([{ type: "user_message", text: INSTRUCTION }, ...acp]),
  );
  return root;
}

const manifestOf = (root: string) => JSON.parse(fs.readFileSync(path.join(root, "m.json"), "utf8"));

describe("Claude Code subagents", () => {
  it("keeps the subagent's and the helper's calls out of the parent's rows", () => {
    const root = rollout(calls());
    const r = benchTrain(root, "convert", "jobs", "--out", "rows.jsonl", "--manifest", "m.json");
    assert.equal(r.code, 0, r.stderr);
    const rows = readRows(path.join(root, "rows.jsonl"));
    assert.deepEqual(
      rows.map((row) => row.exchange_index),
      [4],
    );
    assert.equal("agent_role" in (rows[0] ?? {}), false, "agent_role comes with --subagent-rows");
    const m = manifestOf(root);
    assert.deepEqual(
      [
        m.rollouts_with_subagents,
        m.subagent_calls_seen,
        m.subagent_exchanges_seen,
        m.subagent_exchanges_excluded,
        m.subagent_rows_written,
        m.skipped_helper_calls,
      ],
      [1, 1, 2, 2, 0, 1],
    );
  });

  it("--subagent-rows writes the subagent's calls as its own rows, tagged with the spawn call", () => {
    const root = rollout(calls());
    const r = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "rows.jsonl",
      "--manifest",
      "m.json",
      "--subagent-rows",
      "--row-mode",
      "exchange",
    );
    assert.equal(r.code, 0, r.stderr);
    const rows = readRows(path.join(root, "rows.jsonl"));
    assert.deepEqual(
      rows.map((row) => [row.exchange_index, row.agent_role, row.parent_tool_call_id ?? null]),
      [
        [0, "parent", null],
        [1, "subagent", "toolu_spawn"],
        [3, "subagent", "toolu_spawn"],
        [4, "parent", null],
      ],
    );
    assert.equal(rows[1]?.subagent_type, "general-purpose");
    assert.equal(rows[1]?.subagent_description, "List files");
    assert.deepEqual((rows[1]?.messages as Array<{ content: unknown }> | undefined)?.[0]?.content, PROMPT);
    const m = manifestOf(root);
    assert.deepEqual([m.subagent_rows_written, m.subagent_exchanges_excluded], [2, 0]);
    // Every row is a valid conversation with its tool calls declared and answered.
    const valid = benchTrain(root, "validate", "rows.jsonl", "--require-tool-calls");
    assert.equal(valid.code, 0, valid.stderr);
    assert.equal(valid.stdout, '{"ok": true, "rows": 4, "rows_with_tool_calls": 4}\n');
    const tokens = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "t.jsonl",
      "--format",
      "tokens",
      "--subagent-rows",
    );
    assert.equal(tokens.code, 2);
    assert.match(tokens.stderr, /--subagent-rows does not apply to --format tokens/);
    // rollout mode: the last call of each conversation.
    const r2 = benchTrain(root, "convert", "jobs", "--out", "last.jsonl", "--subagent-rows");
    assert.equal(r2.code, 0, r2.stderr);
    assert.deepEqual(
      readRows(path.join(root, "last.jsonl")).map((row) => [row.exchange_index, row.agent_role]),
      [
        [3, "subagent"],
        [4, "parent"],
      ],
    );
  });

  it("attributes by acp_trajectory.jsonl's parent_tool_call_id when the conversation no longer starts with the prompt", () => {
    const linked = {
      type: "tool_call",
      tool_call_id: "toolu_ls",
      parent_tool_call_id: "toolu_spawn",
      title: "ls",
    };
    const root = rollout(calls("Continue from the summary."), [linked]);
    const r = benchTrain(
      root,
      "convert",
      "jobs",
      "--out",
      "rows.jsonl",
      "--subagent-rows",
      "--row-mode",
      "exchange",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      readRows(path.join(root, "rows.jsonl")).map((row) => row.agent_role),
      ["parent", "subagent", "subagent", "parent"],
    );
  });

  it("fails, writing nothing, on a tool-using call it cannot attribute or on conflicting evidence", () => {
    let root = rollout(calls("Continue from the summary."));
    let r = benchTrain(root, "convert", "jobs", "--out", "rows.jsonl");
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /llm_trajectory\.jsonl line 2: cannot tell whether this model call is the parent's or a subagent's: it declares tools but not Agent\/Task/,
    );
    assert.ok(!fs.existsSync(path.join(root, "rows.jsonl")));
    const elsewhere = { type: "tool_call", tool_call_id: "toolu_ls", parent_tool_call_id: "toolu_other" };
    root = rollout(calls(), [elsewhere]);
    r = benchTrain(root, "convert", "jobs", "--out", "rows.jsonl");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /links it to toolu_other but it starts with the prompt of toolu_spawn/);
    assert.ok(!fs.existsSync(path.join(root, "rows.jsonl")));
  });
});
