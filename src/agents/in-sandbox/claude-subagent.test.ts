// A Claude Code subagent's lines in stream-json carry parent_tool_use_id (the recorded run has the
// field, null, on every line): its tool calls keep it as parent_tool_call_id, the link train uses.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { AgentEvent } from "../../schemas/trajectory.js";
import { parseClaudeStream } from "./claude-code.js";

const FIXTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "claude-code-skill.jsonl",
);

describe("claude-code stream-json with a subagent", () => {
  it("records the spawning call on the subagent's tool calls only", async () => {
    // The recorded run, its Bash call made as a subagent's (started by the call toolu_spawn).
    const lines = (await readFile(FIXTURE, "utf8")).split("\n").map((l) => {
      const bash = l.startsWith('{"type":"assistant"') && l.includes('"name":"Bash"');
      return bash ? l.replace('"parent_tool_use_id":null', '"parent_tool_use_id":"toolu_spawn"') : l;
    });
    const run = parseClaudeStream(lines.join("\n"));
    const calls = run.events.filter((e) => e.type === "tool_call");
    assert.deepEqual(
      calls.map((c) => [c.title, c.type === "tool_call" ? (c.parent_tool_call_id ?? null) : null]),
      [
        ["Skill", null],
        ["Bash", "toolu_spawn"],
      ],
    );
    for (const c of calls) AgentEvent.parse(c);
  });
});
