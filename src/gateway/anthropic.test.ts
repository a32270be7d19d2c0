// Anthropic Messages through the gateway (what Claude Code speaks), translated to chat for the policy
// and back; driven by the official @anthropic-ai/sdk client.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { type Harness, type Loose, POLICY_MODEL, recorded, startHarness } from "./testing/harness.js";

const tools = [
  {
    name: "Bash",
    description: "Run a command",
    input_schema: {
      type: "object" as const,
      properties: { command: { type: "string" } },
      required: ["command"],
    },
  },
];

let h: Harness;

before(async () => {
  h = await startHarness({
    gateway: { sampling: { temperature: 0.6, topP: 0.9, maxTokens: 200 } },
    script: {
      conversations: [
        {
          match: "count lines",
          replies: [
            {
              reasoning: "Use wc.",
              content: "Counting.",
              tool_calls: [{ name: "Bash", arguments: { command: "wc -l a.txt" } }],
            },
            { content: "It has 3 lines." },
          ],
        },
      ],
    },
  });
});
after(() => h.close());

function client(apiKey: string): Anthropic {
  return new Anthropic({ baseURL: h.gateway.url, apiKey, maxRetries: 0, timeout: 10_000 });
}

describe("gateway: Anthropic Messages", () => {
  it("round-trips thinking, tool_use and tool_result, not streamed", async () => {
    const t = h.rollout("msg-plain");
    const anthropic = client(t.apiKey);
    const base = {
      model: "claude-opus-4-1",
      max_tokens: 32000,
      temperature: 1,
      system: [{ type: "text" as const, text: "You are Claude Code." }],
      tools,
    };
    const first = await anthropic.messages.create({
      ...base,
      messages: [{ role: "user", content: [{ type: "text", text: "Please count lines of a.txt" }] }],
    });
    assert.equal(first.type, "message");
    assert.equal(first.stop_reason, "tool_use");
    const [thinking, text, use] = first.content as Loose[];
    assert.deepEqual([thinking.type, thinking.thinking], ["thinking", "Use wc."]);
    assert.deepEqual([text.type, text.text], ["text", "Counting."]);
    assert.equal(use.type, "tool_use");
    assert.deepEqual(use.input, { command: "wc -l a.txt" });
    assert.ok(first.usage.input_tokens > 0 && first.usage.output_tokens > 0);

    const second = await anthropic.messages.create({
      ...base,
      messages: [
        { role: "user", content: "Please count lines of a.txt" },
        { role: "assistant", content: first.content as Loose },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "3 a.txt" }] },
            { type: "text", text: "go on" },
          ],
        },
      ],
    });
    assert.equal(second.stop_reason, "end_turn");
    assert.deepEqual(second.content, [{ type: "text", text: "It has 3 lines." }]);

    const [req1, req2] = h.endpoint.requests.slice(-2).map((r) => r.body);
    assert.equal(req1.model, POLICY_MODEL);
    assert.deepEqual([req1.temperature, req1.top_p, req1.max_tokens], [0.6, 0.9, 200]);
    assert.deepEqual(req1.messages[0], { role: "system", content: "You are Claude Code." });
    assert.deepEqual(req1.tools[0].function.parameters, tools[0]?.input_schema);
    const assistant = req2.messages[2];
    assert.equal(assistant.reasoning_content, "Use wc.");
    assert.equal(assistant.content, "Counting.");
    assert.equal(assistant.tool_calls[0].id, use.id);
    assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), { command: "wc -l a.txt" });
    assert.deepEqual(req2.messages[3], { role: "tool", tool_call_id: use.id, content: "3 a.txt" });
    assert.deepEqual(req2.messages[4], { role: "user", content: "go on" });

    const [line] = (await recorded(h, "msg-plain")) as Loose[];
    assert.equal(line.metadata.wire, "anthropic-messages");
    assert.equal(line.request.headers.authorization, "[redacted]");
    assert.equal(line.request.body.max_tokens, 32000);
    assert.equal(line.response.body.content[2].name, "Bash");
  });

  it("streams message_start .. message_stop and the SDK assembles the same message", async () => {
    const t = h.rollout("msg-stream");
    const stream = client(t.apiKey).messages.stream({
      model: "claude-opus-4-1",
      max_tokens: 1024,
      tools,
      messages: [{ role: "user", content: "Please count lines of a.txt" }],
    });
    const types: string[] = [];
    stream.on("streamEvent", (event) => types.push(event.type));
    const final = await stream.finalMessage();
    assert.equal(types[0], "message_start");
    assert.deepEqual(types.slice(-2), ["message_delta", "message_stop"]);
    assert.equal(final.stop_reason, "tool_use");
    assert.deepEqual(
      final.content.map((b) => b.type),
      ["thinking", "text", "tool_use"],
    );
    assert.deepEqual((final.content[2] as Loose).input, { command: "wc -l a.txt" });
    assert.ok(final.usage.input_tokens > 0, "message_delta carries the cumulative input tokens");

    const [line] = (await recorded(h, "msg-stream")) as Loose[];
    assert.equal(line.metadata.stream, true);
    assert.equal(line.response.body.id, final.id);
    assert.deepEqual(line.response.body.content, JSON.parse(JSON.stringify(final.content)));
  });

  it("answers Claude Code's HEAD / and its ?beta=true path", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${h.gateway.url}/`, { method: "HEAD" }, (res) => resolve(res.statusCode ?? 0));
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 200);
    const t = h.rollout("msg-beta");
    const res = await fetch(`${h.gateway.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: {
        "x-api-key": t.apiKey,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: "claude",
        max_tokens: 10,
        messages: [{ role: "user", content: "count lines" }],
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as Loose).type, "message");
    const [line] = (await recorded(h, "msg-beta")) as Loose[];
    assert.equal(line.request.path, "/v1/messages?beta=true");
    assert.equal(line.request.headers["x-api-key"], "[redacted]");
  });
});
