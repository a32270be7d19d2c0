import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pyJson } from "../../util/py-json.js";
import { checkRow, validateFile, validateRows } from "./validate.js";

const bash = [
  {
    type: "function",
    function: { name: "bash", description: "", parameters: { type: "object", properties: {} } },
  },
];
const call = (id: string, name = "bash") => ({ id, type: "function", function: { name, arguments: "{}" } });

function row(messages: unknown[]) {
  return { messages, tool_defs: bash };
}

describe("checkRow", () => {
  it("accepts a conversation whose tool calls are declared and answered", () => {
    const ok = row([
      { role: "user", content: "go" },
      { role: "assistant", content: "", tool_calls: [call("a")] },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "assistant", content: "done" },
    ]);
    assert.deepEqual(checkRow(ok), { problems: [], toolCalls: 1 });
  });

  it("names an orphan tool output and an undeclared tool; an unanswered call is fine, as upstream has it", () => {
    const bad = row([
      { role: "user", content: "go" },
      { role: "tool", tool_call_id: "zz", content: "?" },
      { role: "assistant", content: "", tool_calls: [call("a", "python")] },
      { role: "user", content: "again" },
      { role: "assistant", content: "done" },
    ]);
    const problems = checkRow(bad).problems.join("\n");
    assert.match(problems, /message 1 is a tool output for "zz", which no earlier tool call is waiting for/);
    assert.match(problems, /calls "python", which no tool declares/);
    assert.equal(checkRow(bad).problems.length, 2, problems);
  });

  it("rejects roles it does not know, a late system message and a row with no assistant", () => {
    const problems = checkRow(
      row([
        { role: "user", content: "a" },
        { role: "system", content: "b" },
        { role: "bot", content: "c" },
      ]),
    ).problems;
    assert.equal(problems.length, 3);
  });

  it("trl-sft rows need one assistant completion and object arguments", () => {
    const trl = {
      prompt: [{ role: "user", content: "go" }],
      completion: [{ role: "assistant", content: "", tool_calls: [call("a")] }],
      tools: bash,
    };
    assert.match(checkRow(trl).problems.join(), /arguments must be a JSON object/);
    const fixed = {
      ...trl,
      completion: [
        {
          role: "assistant",
          content: "",
          tool_calls: [{ ...call("a"), function: { name: "bash", arguments: {} } }],
        },
      ],
    };
    assert.deepEqual(checkRow(fixed).problems, []);
  });

  it("tokens rows need a mask and logprobs for every completion id", () => {
    const tokens = {
      prompt_ids: [1],
      completion_ids: [2, 3],
      completion_mask: [1, 0],
      completion_logprobs: [-1, 0],
    };
    assert.deepEqual(checkRow(tokens).problems, []);
    assert.equal(checkRow({ ...tokens, completion_mask: [1] }).problems.length, 1);
  });
});

describe("validateRows", () => {
  it("counts rows with tool calls and fails --require-tool-calls when one has none", () => {
    const withCall = row([
      { role: "user", content: "go" },
      { role: "assistant", content: "", tool_calls: [call("a")] },
    ]);
    const plain = row([
      { role: "user", content: "go" },
      { role: "assistant", content: "hi" },
    ]);
    assert.deepEqual(validateRows([withCall, plain]), { ok: true, rows: 2, rows_with_tool_calls: 1 });
    const strict = validateRows([withCall, plain], { requireToolCalls: true });
    assert.equal(strict.ok, false);
    assert.match(strict.errors?.[0]?.message ?? "", /not all rows contain tool calls: 1 \/ 2/);
  });

  it("prints as the seed shows, byte for byte", () => {
    assert.equal(
      pyJson({ rows_with_tool_calls: 4, ok: true, rows: 4 }),
      '{"ok": true, "rows": 4, "rows_with_tool_calls": 4}',
    );
  });

  it("names the line of a row that is not JSON", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bf-validate-"));
    const file = path.join(dir, "rows.jsonl");
    const good = JSON.stringify(
      row([
        { role: "user", content: "go" },
        { role: "assistant", content: "hi" },
      ]),
    );
    fs.writeFileSync(file, `${good}\n\n{"messages": [\n`);
    const report = await validateFile(file);
    fs.rmSync(dir, { recursive: true });
    assert.equal(report.ok, false);
    assert.equal(report.rows, 2);
    assert.equal(report.errors?.[0]?.line, 3);
    assert.match(report.errors?.[0]?.message ?? "", /invalid JSON: /);
  });
});
