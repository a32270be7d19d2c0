// Upstream's row rules (validate_prime_sft_row / validate_trl_sft_row), one case each, with the rows
// of upstream's own tests (tests/trajectories/test_export_prime_sft.py, tests/test_train_trl_cli.py).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { checkRow, validateFile } from "./validate.js";

const tool = (name: string) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: {} } },
});
const call = (name: string, args: unknown, id = "call_1") => ({
  id,
  type: "function",
  function: { name, arguments: args },
});
const problems = (row: unknown, format?: "prime-sft" | "trl-sft") =>
  checkRow(row, format).problems.join("\n");

describe("rows upstream rejects, we reject", () => {
  it("a banned message key (reasoning_content)", () => {
    const row = {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "secret", reasoning_content: "do not train" },
      ],
    };
    assert.match(problems(row), /carries "reasoning_content"/);
  });

  it("every banned row key", () => {
    const keys = ["gold", "gold_solution", "verify_source", "tools_py", "initial_db", "db_json"];
    const more = ["target_constants", "private_reasoning", "reasoning_content", "thinking_blocks"];
    for (const k of [...keys, ...more]) {
      const row = { messages: [{ role: "assistant", content: "x" }], [k]: 1 };
      assert.match(problems(row), new RegExp(`row carries "${k}"`), k);
    }
  });

  it("tool calls without tool defs", () => {
    const row = {
      messages: [
        { role: "user", content: "finish" },
        { role: "assistant", content: "", tool_calls: [call("finish", "{}")] },
      ],
    };
    assert.match(problems(row), /declares no tools/);
  });

  it("malformed, non-object arguments; an unknown tool; an orphan tool output", () => {
    const withCall = (c: unknown) => ({
      messages: [
        { role: "user", content: "Call the tool." },
        { role: "assistant", content: "", tool_calls: [c] },
      ],
      tool_defs: [tool("terminal"), tool("finish")],
    });
    assert.match(
      problems(withCall(call("terminal", '{"security_risk":"MEDIUM","summary":"Replace old brand"'))),
      /arguments are not valid JSON/,
    );
    assert.match(problems(withCall(call("finish", "[]"))), /must decode to a JSON object/);
    assert.match(problems(withCall(call("missing", "{}"))), /calls "missing", which no tool declares/);
    const orphan = {
      messages: [
        { role: "user", content: "Call the tool." },
        { role: "assistant", content: "No tool call." },
        { role: "tool", tool_call_id: "call_missing", content: "ok" },
      ],
    };
    assert.match(
      problems(orphan),
      /tool output for "call_missing", which no earlier tool call is waiting for/,
    );
  });

  it("a tool output without an id; a system message after the first; a role it does not know", () => {
    const row = {
      messages: [
        { role: "user", content: "a" },
        { role: "system", content: "b" },
        { role: "function", content: "c" },
        { role: "tool", content: "d" },
        { role: "assistant", content: "e" },
      ],
    };
    const p = problems(row);
    assert.match(p, /message 1 is a system message after the first/);
    assert.match(p, /message 2 has role "function"/);
    assert.match(p, /message 3 is a tool output without a tool_call_id/);
  });

  it("trl-sft: tool_defs instead of tools, an empty prompt", () => {
    const row = {
      prompt: [],
      completion: [{ role: "assistant", content: "x" }],
      tools: [],
      tool_defs: [],
    };
    const p = problems(row, "trl-sft");
    assert.match(p, /names its tools `tools`, not `tool_defs`/);
    assert.match(p, /prompt must be a non-empty message list/);
  });
});

describe("rows upstream accepts, we accept", () => {
  it("Prime-RL's prompt + completion row with tool_defs, as prime-sft, with or without --format", async () => {
    const row = {
      prompt: [{ role: "user", content: "do it" }],
      completion: [{ role: "assistant", content: "", tool_calls: [call("finish", "{}")] }],
      tool_defs: [tool("finish")],
    };
    const file = path.join(tmp("bf-upstream-rules-"), "results.jsonl");
    fs.writeFileSync(file, `${JSON.stringify(row)}\n`);
    for (const format of [undefined, "prime-sft"] as const) {
      const report = await validateFile(file, { format, expectedRows: 1 });
      assert.deepEqual(report, { ok: true, rows: 1, rows_with_tool_calls: 1 });
    }
  });

  it("a call never answered; content null beside tool_calls; tools stored as a JSON string", () => {
    const row = {
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [call("finish", "{}", "a")] },
        { role: "user", content: "stop" },
        { role: "assistant", content: "stopped" },
      ],
      tool_defs: JSON.stringify([tool("finish")]),
    };
    assert.equal(problems(row), "");
  });

  it("a late output still answers its call (the call stays open)", () => {
    const row = {
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: "", tool_calls: [call("finish", "{}", "a")] },
        { role: "user", content: "meanwhile" },
        { role: "tool", tool_call_id: "a", content: "done" },
        { role: "assistant", content: "ok" },
      ],
      tool_defs: [tool("finish")],
    };
    assert.equal(problems(row), "");
  });
});
