import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { checkMessages } from "../../train/validate/messages.js";
import { toExchange } from "../exchange.js";
import { trajectoryLines, type Wire } from "../testing/trajectory-builder.js";
import { conversationOf } from "./index.js";

function lastCall(wire: Wire) {
  const lines = trajectoryLines({ task: "t", model: "m", calls: [{}, {}, {}], wire });
  return toExchange(JSON.parse(lines[2] as string), 2, "x.jsonl");
}

const ex = (request: unknown, response: unknown, metadata: unknown = {}) =>
  toExchange(
    { request: { path: "/v1/x", body: request }, response: { status_code: 200, body: response }, metadata },
    0,
    "x",
  );

describe("every dialect becomes chat messages with its tool calls kept", () => {
  for (const wire of ["openai-chat", "openai-responses", "anthropic-messages"] as const) {
    it(wire, () => {
      const conv = conversationOf(lastCall(wire));
      const roles = conv.messages.map((m) => m.role);
      assert.deepEqual(roles, ["system", "user", "assistant", "tool", "assistant", "tool"]);
      const calls = conv.messages.flatMap((m) => m.tool_calls ?? []);
      assert.deepEqual(
        calls.map((c) => [c.function.name, JSON.parse(c.function.arguments as string).command]),
        [
          ["bash", "echo step 0"],
          ["bash", "echo step 1"],
        ],
      );
      const tools = conv.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]);
      assert.deepEqual(
        tools,
        calls.map((c, i) => [c.id, `step ${i}`]),
      );
      assert.equal(conv.assistant?.content, "Done.");
      assert.deepEqual(
        conv.tools.map((t) => t.function.name),
        ["bash"],
      );
      assert.deepEqual(conv.tools[0]?.function.parameters, {
        type: "object",
        properties: { command: { type: "string" } },
      });
      const check = checkMessages([...conv.messages, conv.assistant], new Set(["bash"]), {
        objectArguments: false,
      });
      assert.deepEqual(check.problems, []);
      assert.equal(check.toolCalls, 2);
    });
  }
});

describe("dialect details", () => {
  it("Anthropic: tool results come before the text of the same user turn; thinking is dropped", () => {
    const conv = conversationOf(
      ex(
        {
          messages: [
            { role: "user", content: "go" },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "x" },
                { type: "tool_use", id: "t1", name: "bash", input: { c: 1 } },
              ],
            },
            {
              role: "user",
              content: [
                { type: "text", text: "reminder" },
                { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "ok" }] },
              ],
            },
          ],
        },
        { type: "message", content: [{ type: "text", text: "done" }] },
        { wire: "anthropic-messages" },
      ),
    );
    assert.deepEqual(conv.messages, [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "t1", type: "function", function: { name: "bash", arguments: '{"c": 1}' } }],
      },
      { role: "tool", tool_call_id: "t1", content: "ok" },
      { role: "user", content: "reminder" },
    ]);
  });

  it("Responses: consecutive calls join one assistant turn; reasoning items are dropped", () => {
    const conv = conversationOf(
      ex(
        {
          input: [
            { role: "developer", content: "rules" },
            { role: "user", content: "go" },
            { type: "reasoning", summary: [] },
            { type: "function_call", call_id: "a", name: "bash", arguments: "{}" },
            { type: "function_call", call_id: "b", name: "bash", arguments: "{}" },
            { type: "function_call_output", call_id: "a", output: "1" },
            { type: "function_call_output", call_id: "b", output: "2" },
          ],
        },
        {
          object: "response",
          output: [
            { type: "reasoning" },
            { type: "message", role: "assistant", content: [{ type: "output_text", text: "fin" }] },
          ],
        },
      ),
    );
    assert.deepEqual(
      conv.messages.map((m) => m.role),
      ["system", "user", "assistant", "tool", "tool"],
    );
    assert.deepEqual(
      conv.messages[2]?.tool_calls?.map((c) => c.id),
      ["a", "b"],
    );
    assert.deepEqual(conv.assistant, { role: "assistant", content: "fin" });
  });

  it("OpenAI chat: malformed arguments are kept, wrapped; a late system message becomes user", () => {
    const conv = conversationOf(
      ex(
        {
          messages: [
            { role: "user", content: "go" },
            { role: "system", content: "late" },
          ],
        },
        {
          choices: [
            {
              message: {
                role: "assistant",
                content: null,
                reasoning_content: "secret",
                tool_calls: [
                  { id: "c", type: "function", function: { name: "bash", arguments: "{not json" } },
                ],
              },
            },
          ],
        },
      ),
    );
    assert.equal(conv.messages[1]?.role, "user");
    assert.equal(
      conv.assistant?.tool_calls?.[0]?.function.arguments,
      // Python's json.dumps, as upstream writes it.
      '{"_malformed_json_arguments": "{not json"}',
    );
    assert.equal("reasoning_content" in (conv.assistant ?? {}), false);
  });
});

// The gateway's wire fixtures: request and response bodies in each dialect's published shape.
const WIRE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "test",
  "fixtures",
  "wire",
);
const CASES = [
  ["openai-chat", "request.tool-result.json", "response.tools.json"],
  ["openai-responses", "request.function-call-output.json", "response.tools.json"],
  ["anthropic", "request.tool-result.json", "response.tool-use.json"],
] as const;

describe("the gateway's wire fixtures read as valid chat", () => {
  for (const [dir, request, response] of CASES) {
    it(dir, () => {
      const read = (f: string) => JSON.parse(fs.readFileSync(path.join(WIRE, dir, f), "utf8"));
      const wire = dir === "anthropic" ? "anthropic-messages" : dir;
      const conv = conversationOf(ex(read(request), read(response), { wire }));
      const names = new Set(conv.tools.map((t) => t.function.name));
      assert.ok(names.size > 0);
      assert.ok((conv.assistant?.tool_calls?.length ?? 0) > 0, "the reply's tool call is kept");
      assert.ok(
        conv.messages.some((m) => m.role === "tool"),
        "the earlier tool result is kept",
      );
      assert.deepEqual(
        checkMessages([...conv.messages, conv.assistant], names, { objectArguments: false }).problems,
        [],
      );
    });
  }
});
