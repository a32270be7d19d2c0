// The three agents' JSON outputs (recorded from real runs of the pinned versions on the skill
// fixture task) become trajectory events with tool inputs and outputs, and skill invocations count.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseClaudeStream } from "./claude-code.js";
import { parseCodexJson } from "./codex.js";
import { parseOpencodeJson } from "./opencode.js";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
const fixture = (name: string) => readFile(path.join(FIXTURES, name), "utf8");
const MARKER = "BENCHFLOW-SKILL-7f3a";

describe("agent JSON output -> trajectory", () => {
  it("claude-code stream-json: messages, Skill and Bash calls paired with their results", async () => {
    const run = parseClaudeStream(await fixture("claude-code-skill.jsonl"));
    assert.equal(run.nToolCalls, 2);
    assert.equal(run.nSkillInvocations, 1);
    assert.equal(run.error, null);
    const calls = run.events.filter((e) => e.type === "tool_call");
    assert.deepEqual(
      calls.map((c) => [c.title, c.kind, c.status]),
      [
        ["Skill", "other", "completed"],
        ["Bash", "execute", "completed"],
      ],
    );
    assert.deepEqual(calls[0]?.type === "tool_call" && calls[0].raw_input, { skill: "greeting" });
    assert.match(String(calls[1]?.type === "tool_call" && calls[1].raw_output), new RegExp(MARKER));
    assert.deepEqual(
      run.events.filter((e) => e.type === "agent_message").map((e) => e.type === "agent_message" && e.text),
      ["Loading the skill.", "Done."],
    );
  });

  it("claude-code killed mid-call: the open call is kept as pending, a cut-off line is skipped", async () => {
    const lines = (await fixture("claude-code-skill.jsonl")).split("\n");
    const cut = lines.findIndex((l) => l.includes('"name":"Bash"'));
    const text = `${lines.slice(0, cut + 1).join("\n")}\n{"type":"user","mess`;
    const run = parseClaudeStream(text);
    const bash = run.events.find((e) => e.type === "tool_call" && e.title === "Bash");
    assert.equal(bash?.type === "tool_call" && bash.status, "pending");
    assert.equal(run.nToolCalls, 2);
  });

  it("codex exec --json: command executions with output and exit code; reading a SKILL.md counts", async () => {
    const run = parseCodexJson(await fixture("codex-skill.jsonl"));
    assert.equal(run.nToolCalls, 1);
    assert.equal(run.nSkillInvocations, 1);
    const [call] = run.events.filter((e) => e.type === "tool_call");
    assert.equal(call?.type === "tool_call" && call.kind, "execute");
    const output =
      call?.type === "tool_call" ? (call.raw_output as { output: string; exit_code: number }) : null;
    assert.equal(output?.exit_code, 0);
    assert.match(output?.output ?? "", new RegExp(MARKER));
    assert.match(JSON.stringify(call?.type === "tool_call" && call.raw_input), /SKILL\.md/);
  });

  it("codex: a failed turn is the agent's reported error", () => {
    const run = parseCodexJson('{"type":"turn.failed","error":{"message":"stream disconnected"}}\n');
    assert.match(run.error ?? "", /stream disconnected/);
  });

  it("opencode run --format json: skill and bash tool calls with inputs and outputs", async () => {
    const run = parseOpencodeJson(await fixture("opencode-skill.jsonl"));
    assert.equal(run.nToolCalls, 2);
    assert.equal(run.nSkillInvocations, 1);
    const calls = run.events.filter((e) => e.type === "tool_call");
    assert.deepEqual(
      calls.map((c) => c.type === "tool_call" && [c.kind, c.status]),
      [
        ["other", "completed"],
        ["execute", "completed"],
      ],
    );
    assert.match(
      JSON.stringify(calls.map((c) => c.type === "tool_call" && c.raw_output)),
      new RegExp(MARKER),
    );
    assert.ok(
      run.events.every((e) => typeof e.ts === "string"),
      "opencode's own timestamps are kept",
    );
  });
});
