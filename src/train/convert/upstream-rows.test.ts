// `--upstream-rows`: the same recorded calls read as upstream's converter reads them. The Anthropic
// call is Anthropic's documented tool_use / tool_result exchange (test/fixtures/wire/anthropic).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../../cli/testing/run-cli.js";
import { conversationOf } from "../../jobs-dir/conversation/index.js";
import { toExchange } from "../../jobs-dir/exchange.js";
import { writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { checkRow } from "../validate/validate.js";
import { upstreamConversationOf } from "./upstream-rows.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WIRE = path.join(HERE, "..", "..", "..", "test", "fixtures", "wire", "anthropic");
const CALLS = path.join(HERE, "..", "fixtures", "calls");
const read = (dir: string, f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));

function anthropicCall() {
  const body = { ...read(WIRE, "request.tool-result.json"), system: "You are Claude Code." };
  return {
    request: { method: "POST", path: "/v1/messages", body },
    response: { status_code: 200, body: read(WIRE, "response.text.json") },
  };
}

describe("an Anthropic call, read both ways", () => {
  const ex = toExchange(anthropicCall(), 0, "x");

  it("ours keeps the system prompt, the tool call, its result and the tool's schema", () => {
    const conv = conversationOf(ex);
    assert.deepEqual(
      conv.messages.map((m) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(conv.messages[2]?.tool_calls?.[0]?.function.name, "get_weather");
    assert.deepEqual(conv.tools[0]?.function.parameters.required, ["location"]);
  });

  it("upstream's flattens the history to text, drops the system prompt and the schema", () => {
    const conv = upstreamConversationOf(ex);
    assert.deepEqual(conv.messages, [
      { role: "user", content: "What is the weather like in San Francisco?" },
      { role: "assistant", content: "I'll check the current weather in San Francisco for you." },
      { role: "user", content: "15 degrees" },
    ]);
    assert.deepEqual(conv.assistant, { role: "assistant", content: "Hi! My name is Claude." });
    assert.deepEqual(conv.tools, [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Get the current weather in a given location",
          parameters: { type: "object", properties: {} },
        },
      },
    ]);
  });

  it("upstream's keeps one assistant message per Responses call and wraps an empty argument string", () => {
    const oh = read(CALLS, "openhands-responses-in-chat.json");
    const second = { type: "function_call", call_id: "call_2", name: "file_editor", arguments: "" };
    oh.request.body.messages.splice(2, 0, second);
    const ours = conversationOf(toExchange(oh, 0, "x"));
    const theirs = upstreamConversationOf(toExchange(oh, 0, "x"));
    assert.deepEqual(
      ours.messages.map((m) => m.role),
      ["user", "assistant", "tool"],
    );
    assert.deepEqual(
      theirs.messages.map((m) => m.role),
      ["user", "assistant", "assistant", "tool"],
    );
    assert.equal(ours.messages[1]?.tool_calls?.[1]?.function.arguments, "{}");
    assert.equal(
      theirs.messages[2]?.tool_calls?.[0]?.function.arguments,
      '{"_malformed_json_arguments": ""}',
    );
  });
});

describe("bench train convert --upstream-rows", () => {
  it("writes upstream's prime-sft row: the window from the last user text on", () => {
    const root = tmp("bf-upstream-rows-");
    const [built] = writeJob({
      dir: path.join(root, "job"),
      agent: "claude-agent-acp",
      rollouts: [{ calls: 0 }],
    });
    const file = path.join(built?.dir as string, "trajectory", "llm_trajectory.jsonl");
    fs.writeFileSync(file, `${JSON.stringify(anthropicCall())}\n`);
    const cli = TRAIN_CLI;
    const out = path.join(root, "rows.jsonl");
    const run = (...extra: string[]) => {
      execFileSync(process.execPath, [
        "--import",
        "tsx",
        cli,
        "convert",
        path.join(root, "job"),
        "--out",
        out,
        ...extra,
      ]);
      return JSON.parse(fs.readFileSync(out, "utf8").trim());
    };
    const theirs = run("--upstream-rows");
    assert.deepEqual(theirs.messages, [
      { role: "user", content: "15 degrees" },
      { role: "assistant", content: "Hi! My name is Claude." },
    ]);
    assert.deepEqual(checkRow(theirs, "prime-sft").problems, []);
    const ours = run();
    assert.deepEqual(
      ours.messages.map((m: { role: string }) => m.role),
      ["user", "assistant", "tool", "assistant"],
    );
  });
});
