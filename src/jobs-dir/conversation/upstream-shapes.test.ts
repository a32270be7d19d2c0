// Calls in the shapes upstream's converter reads (fixtures from upstream's tests and the providers'
// docs, src/train/fixtures/calls/), read as upstream reads them.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Manifest } from "../../schemas/train-manifest.js";
import { convertJob } from "../../train/convert/convert.js";
import { checkRow } from "../../train/validate/validate.js";
import { callPurposeOf, isSuccessful, toExchange } from "../exchange.js";
import { writeJob } from "../testing/job-builder.js";
import { tmp } from "../testing/tmp.js";
import { conversationOf, repairToolOutputs } from "./index.js";

const FIXTURES = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "train",
  "fixtures",
  "calls",
);
const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8"));
const call = (name: string, index = 0) => toExchange(fixture(name), index, `${name}.json`);

/** One rollout of `agent` whose llm_trajectory.jsonl holds the fixtures given, in order. */
function jobOf(agent: string, calls: string[]): string {
  const root = tmp("bf-shapes-");
  const [built] = writeJob({ dir: path.join(root, "job"), agent, rollouts: [{ calls: 0 }] });
  const lines = calls.map((c) => JSON.stringify(fixture(c)));
  fs.writeFileSync(
    path.join(built?.dir as string, "trajectory", "llm_trajectory.jsonl"),
    `${lines.join("\n")}\n`,
  );
  return root;
}

async function convert(root: string, over: Record<string, unknown> = {}) {
  const out = path.join(root, "train", "rows.jsonl");
  const manifest = path.join(root, "train", "manifest.json");
  await convertJob({ jobs: path.join(root, "job"), out, manifest, ...over });
  const rows = fs
    .readFileSync(out, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
  return { rows, manifest: JSON.parse(fs.readFileSync(manifest, "utf8")) as Manifest };
}

describe("OpenHands: Responses items inside a chat messages list", () => {
  it("become an assistant tool call and its tool output; the Responses answer is the reply", () => {
    const conv = conversationOf(call("openhands-responses-in-chat"));
    assert.deepEqual(conv.messages, [
      { role: "user", content: "Create the file." },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "file_editor", arguments: '{"command":"create"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "File created." },
    ]);
    assert.deepEqual(conv.assistant, { role: "assistant", content: "Done." });
    assert.equal(conv.tools[0]?.function.name, "file_editor");
  });

  it("a chat message before the items stays where it is; reasoning items are dropped", () => {
    const ex = fixture("openhands-responses-in-chat") as { request: { body: { messages: unknown[] } } };
    ex.request.body.messages.unshift({ role: "system", content: "rules" });
    ex.request.body.messages.splice(2, 0, {
      type: "reasoning",
      summary: [{ type: "summary_text", text: "hm" }],
    });
    const conv = conversationOf(toExchange(ex, 0, "x"));
    assert.deepEqual(
      conv.messages.map((m) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(JSON.stringify(conv).includes("hm"), false);
  });

  it("converts to one prime-sft row (a test that failed before: no reply was found)", async () => {
    const { rows, manifest } = await convert(jobOf("openhands", ["openhands-responses-in-chat"]));
    assert.equal(manifest.rows_written, 1);
    assert.equal(rows[0].messages[1].tool_calls[0].function.name, "file_editor");
    assert.deepEqual(rows[0].messages.at(-1), { role: "assistant", content: "Done." });
  });
});

describe("duplicate tool outputs for one call id", () => {
  it("are merged into one, their texts joined by a newline, and counted", async () => {
    const { rows, manifest } = await convert(jobOf("openhands", ["duplicate-tool-output"]));
    assert.deepEqual(
      rows[0].messages.filter((m: { role: string }) => m.role === "tool"),
      [{ role: "tool", tool_call_id: "call_1", content: "README.md\npyproject.toml" }],
    );
    assert.equal(manifest.tool_messages_merged, 1);
    assert.equal(manifest.tool_call_ids_rewritten, 0);
    assert.equal("provider_specific_fields" in rows[0].messages.at(-1), false);
  });

  it("an output whose id no open call has answers the oldest open call, which takes its id", async () => {
    const { rows, manifest } = await convert(jobOf("openhands", ["legacy-tool-call-ids"]));
    assert.equal(rows[0].messages[1].tool_calls[0].id, "call_runtime_1");
    assert.equal(manifest.tool_call_ids_rewritten, 1);
    assert.deepEqual(checkRow(rows[0], "prime-sft").problems, []);
  });

  it("an output with no open call is left for validation to reject", () => {
    const { messages, repairs } = repairToolOutputs([
      { role: "user", content: "go" },
      { role: "tool", tool_call_id: "x", content: "stray" },
      { role: "assistant", content: "done" },
    ]);
    assert.deepEqual(repairs, { tool_call_ids_rewritten: 0, tool_messages_merged: 0 });
    assert.equal(messages[1]?.tool_call_id, "x");
  });
});

describe("a /v1/messages call whose tools are in chat's shape", () => {
  it("reads its tools, and its tool_use reply as a tool call", () => {
    const conv = conversationOf(call("anthropic-openai-tools"));
    assert.deepEqual(conv.tools, [
      {
        type: "function",
        function: {
          name: "bash",
          description: "Run shell commands.",
          parameters: { type: "object", properties: {} },
        },
      },
    ]);
    assert.equal(conv.assistant?.content, "Let me list them.");
    assert.deepEqual(conv.assistant?.tool_calls, [
      { id: "toolu_1", type: "function", function: { name: "bash", arguments: '{"command": "ls"}' } },
    ]);
  });

  it("converts to a row with tool calls; a rollout of failed calls is one provider-error skip", async () => {
    const ok = await convert(jobOf("claude-agent-acp", ["anthropic-openai-tools"]));
    assert.equal(ok.manifest.rows_written, 1);
    assert.equal(ok.manifest.rows_with_tool_calls, 1);
    const failed = await convert(
      jobOf("claude-agent-acp", ["anthropic-openai-tools-429", "anthropic-openai-tools-429"]),
    );
    assert.equal(failed.manifest.rows_written, 0);
    assert.equal(failed.manifest.skipped_provider_error, 1);
    assert.equal(failed.manifest.skipped_exchanges_provider_error, 2);
  });
});

describe("only HTTP 200 is a successful call", () => {
  const withStatus = (status: unknown) => {
    const ex = fixture("opencode-agent") as { response: Record<string, unknown> };
    ex.response.status_code = status;
    return toExchange(ex, 0, "x");
  };
  it("201, 204, a missing status and a string status are not", () => {
    assert.equal(isSuccessful(withStatus(200)), true);
    for (const s of [201, 204, undefined, "200", 500])
      assert.equal(isSuccessful(withStatus(s)), false, String(s));
  });
});

describe("OpenCode's helper calls without call_purpose", () => {
  it("are told apart by the opening of their system prompt; a tool-less call is a helper", () => {
    const purpose = (system: string | null, tools: boolean, agent = "opencode") => {
      const ex = fixture("opencode-title") as { request: { body: Record<string, unknown> } };
      ex.request.body.messages = [
        ...(system === null ? [] : [{ role: "system", content: [{ type: "text", text: `  ${system}` }] }]),
        { role: "user", content: "x" },
      ];
      if (tools) ex.request.body.tools = [{ type: "function", function: { name: "f" } }];
      return callPurposeOf(toExchange(ex, 0, "x"), agent);
    };
    assert.equal(purpose("You are a title generator. Output only a title.", false), "title");
    assert.equal(purpose("Summarize what was done in this conversation. Be brief.", true), "summary");
    assert.equal(purpose("You are an anchored context summarization assistant for x", true), "compaction");
    assert.equal(purpose("You are opencode, an agent.", true), "agent");
    assert.equal(purpose(null, false), "helper");
    assert.equal(purpose(null, false, "openhands"), "agent", "only OpenCode's calls are inferred");
    const recorded = toExchange(
      { ...fixture("opencode-title"), metadata: { call_purpose: "agent" } },
      0,
      "x",
    );
    assert.equal(callPurposeOf(recorded, "opencode"), "agent", "a recorded purpose wins");
  });

  it("trl-sft leaves them out and counts them (upstream's test_trl_sft_cli_excludes_opencode_helpers)", async () => {
    const { rows, manifest } = await convert(jobOf("opencode", ["opencode-agent", "opencode-title"]), {
      format: "trl-sft",
      rowMode: "exchange",
      expectedRows: 1,
    });
    assert.deepEqual(rows[0].prompt, [{ role: "user", content: "do it" }]);
    assert.deepEqual(rows[0].completion[0].tool_calls[0].function, { name: "finish", arguments: {} });
    assert.equal(rows[0].tools[0].function.name, "finish");
    assert.equal(manifest.skipped_helper_calls, 1);
  });
});

describe("tool-call arguments as upstream writes them", () => {
  it("a malformed string is wrapped, not dropped, and the row validates", async () => {
    const { rows } = await convert(jobOf("openhands", ["malformed-arguments"]));
    const args = rows[0].messages.at(-1).tool_calls[0].function.arguments;
    assert.deepEqual(JSON.parse(args), {
      _malformed_json_arguments: '{"command":"python - <<\'PY\'\nunterminated',
    });
    assert.deepEqual(checkRow(rows[0], "prime-sft").problems, []);
  });

  it("JSON that is not an object, and a value that is not a string, are wrapped under their own keys", () => {
    const argsOf = (value: unknown) => {
      const ex = fixture("malformed-arguments") as {
        response: {
          body: { choices: Array<{ message: { tool_calls: Array<{ function: Record<string, unknown> }> } }> };
        };
      };
      const fn = ex.response.body.choices[0]?.message.tool_calls[0]?.function as Record<string, unknown>;
      fn.arguments = value;
      return conversationOf(toExchange(ex, 0, "x")).assistant?.tool_calls?.[0]?.function.arguments;
    };
    assert.equal(argsOf("[1, 2]"), '{"_non_object_json_arguments": [1, 2]}');
    assert.equal(argsOf(7), '{"_non_object_arguments": 7}');
    assert.equal(argsOf(null), "{}");
    assert.equal(argsOf({ path: "é" }), '{"path": "\\u00e9"}', "an object is written as Python's json.dumps");
    assert.equal(argsOf('{"a":1}'), '{"a":1}', "a string holding an object is kept as the model wrote it");
  });
});

describe("the OpenAI docs' Responses function call", () => {
  it("reads as a call and its output; the reply is the message text", () => {
    const conv = conversationOf(call("openai-docs-responses-function-call"));
    assert.deepEqual(
      conv.messages.map((m) => m.role),
      ["user", "assistant", "tool"],
    );
    assert.equal(
      conv.messages[1]?.tool_calls?.[0]?.id,
      "call_12345xyz",
      "call_id, not the item id, is the call's",
    );
    assert.equal(conv.messages[2]?.tool_call_id, "call_12345xyz");
    assert.equal(conv.assistant?.content, "The current temperature in Paris is 14°C.");
    assert.deepEqual(conv.tools[0]?.function.parameters.required, ["location"]);
  });
});
