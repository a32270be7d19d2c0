// OpenAI Responses through the gateway (what Codex speaks), translated to chat for the policy and back;
// driven by the official openai client.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { type Harness, type Loose, POLICY_MODEL, recorded, startHarness } from "./testing/harness.js";

const shell = {
  type: "function" as const,
  name: "shell",
  description: "Run a command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  strict: false,
};
const applyPatch = { type: "custom" as const, name: "apply_patch", description: "Apply a patch" };

let h: Harness;

before(async () => {
  h = await startHarness({
    gateway: { sampling: { temperature: 0.3, maxTokens: 128 }, capture: { enabled: true } },
    script: {
      conversations: [
        {
          match: "fix the bug",
          replies: [
            {
              reasoning: "Look at the code.",
              tool_calls: [{ name: "shell", arguments: { command: "cat main.py" } }],
            },
            { tool_calls: [{ name: "apply_patch", arguments: { input: "*** Begin Patch\n*** End Patch" } }] },
            { content: "Fixed it." },
          ],
        },
      ],
    },
  });
});
after(() => h.close());

function client(apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${h.gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });
}

describe("gateway: OpenAI Responses", () => {
  it("round-trips function_call, custom_tool_call and their outputs, not streamed", async () => {
    const t = h.rollout("resp-plain");
    const openai = client(t.apiKey);
    const base = {
      model: "gpt-5-codex",
      instructions: "You are Codex.",
      tools: [shell, applyPatch],
      store: false,
    };
    const input: Loose[] = [{ role: "user", content: [{ type: "input_text", text: "Please fix the bug." }] }];
    const first = await openai.responses.create({ ...base, input, temperature: 1.7 });
    assert.equal(first.object, "response");
    assert.equal(first.status, "completed");
    const [reasoning, call] = first.output as Loose[];
    assert.equal(reasoning.type, "reasoning");
    assert.equal(reasoning.content[0].text, "Look at the code.");
    assert.equal(call.type, "function_call");
    assert.equal(call.name, "shell");
    assert.deepEqual(JSON.parse(call.arguments), { command: "cat main.py" });
    assert.ok(call.call_id);
    assert.ok((first.usage?.input_tokens ?? 0) > 0);

    input.push(reasoning, call, { type: "function_call_output", call_id: call.call_id, output: "print(1)" });
    const second = await openai.responses.create({ ...base, input });
    const custom = second.output[0] as Loose;
    assert.equal(custom.type, "custom_tool_call");
    assert.equal(custom.name, "apply_patch");
    assert.equal(custom.input, "*** Begin Patch\n*** End Patch");

    input.push(custom, { type: "custom_tool_call_output", call_id: custom.call_id, output: "Done!" });
    const third = await openai.responses.create({ ...base, input });
    assert.equal(third.output_text, "Fixed it.");

    const [req1, req2, req3] = h.endpoint.requests.slice(-3).map((r) => r.body);
    assert.deepEqual(req1.messages, [
      { role: "system", content: "You are Codex." },
      { role: "user", content: "Please fix the bug." },
    ]);
    assert.equal(req1.model, POLICY_MODEL);
    assert.equal(req1.temperature, 0.3);
    assert.equal(req1.max_tokens, 128);
    assert.deepEqual(
      req1.tools.map((x: Loose) => x.function.name),
      ["shell", "apply_patch"],
    );
    const assistant = req2.messages[2];
    assert.equal(assistant.role, "assistant");
    assert.equal(assistant.reasoning_content, "Look at the code.");
    assert.equal(assistant.tool_calls[0].id, call.call_id);
    assert.deepEqual(req2.messages[3], { role: "tool", tool_call_id: call.call_id, content: "print(1)" });
    assert.deepEqual(JSON.parse(req3.messages[4].tool_calls[0].function.arguments), {
      input: "*** Begin Patch\n*** End Patch",
    });
    assert.deepEqual(req3.messages[5], { role: "tool", tool_call_id: custom.call_id, content: "Done!" });

    const lines = (await recorded(h, "resp-plain")) as Loose[];
    assert.equal(lines.length, 3);
    assert.equal(lines[0].metadata.wire, "openai-responses");
    assert.equal(lines[0].metadata.call_type, "aresponses");
    assert.equal(lines[0].request.body.temperature, 1.7);
    assert.equal(lines[0].response.body.output[1].name, "shell");
    assert.equal(lines[0].metadata.upstream_request.body.messages[1].content, "Please fix the bug.");
    assert.equal(lines[0].metadata.token_capture.wire, "openai-responses");
  });

  it("streams the documented event sequence and the SDK assembles the same output", async () => {
    const t = h.rollout("resp-stream");
    const openai = client(t.apiKey);
    const stream = openai.responses.stream({
      model: "gpt-5-codex",
      tools: [shell, applyPatch],
      input: "Please fix the bug.",
    });
    const types: string[] = [];
    let args = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.function_call_arguments.delta") args += event.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(types[0], "response.created");
    assert.equal(types[1], "response.in_progress");
    assert.equal(types.at(-1), "response.completed");
    assert.ok(types.includes("response.reasoning_text.delta"));
    assert.ok(
      types.indexOf("response.function_call_arguments.done") < types.lastIndexOf("response.output_item.done"),
    );
    assert.deepEqual(JSON.parse(args), { command: "cat main.py" });
    const [reasoning, call] = final.output as Loose[];
    assert.equal(reasoning.content[0].text, "Look at the code.");
    assert.equal(call.arguments, args);
    assert.equal(call.status, "completed");

    const [line] = (await recorded(h, "resp-stream")) as Loose[];
    assert.equal(line.metadata.stream, true);
    assert.equal(line.response.body.status, "completed");
    assert.equal(line.response.body.id, final.id);
    assert.deepEqual(
      line.response.body.output.map((o: Loose) => o.id),
      final.output.map((o: Loose) => o.id),
    );
  });

  it("refuses previous_response_id with a clear 400", async () => {
    const t = h.rollout("resp-prev");
    await assert.rejects(
      client(t.apiKey).responses.create({ model: "m", input: "hi", previous_response_id: "resp_1" }),
      (err: Loose) => err.status === 400 && /previous_response_id/.test(err.message),
    );
    const [line] = (await recorded(h, "resp-prev")) as Loose[];
    assert.equal(line.response.status_code, 400);
    assert.match(line.response.body.error.message, /previous_response_id/);
  });
});
