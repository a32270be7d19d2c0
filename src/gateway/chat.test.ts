// OpenAI chat through the gateway, driven by the official openai client against the scripted endpoint.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import {
  type Harness,
  type Loose,
  POLICY_MODEL,
  recorded,
  startHarness,
  UPSTREAM_KEY,
} from "./testing/harness.js";

const bash = {
  type: "function" as const,
  function: {
    name: "bash",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};

let h: Harness;

before(async () => {
  h = await startHarness({
    endpoint: { versionHeader: "ckpt-7" },
    gateway: {
      sampling: { temperature: 0.2, topP: 0.95, maxTokens: 256 },
      capture: { enabled: true },
      price: { inputPerMTok: 1, outputPerMTok: 2 },
    },
    script: {
      conversations: [
        {
          match: "list files",
          replies: [
            {
              reasoning: "I should look first.",
              tool_calls: [{ name: "bash", arguments: { command: "ls -la" } }],
            },
            { content: "There are two files." },
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

const firstTurn = [
  { role: "system" as const, content: "You are a careful agent." },
  { role: "user" as const, content: "Please list files in /app." },
];

describe("gateway: OpenAI chat", () => {
  it("round-trips tool calls non-streamed, enforcing model and sampling and recording each call", async () => {
    const t = h.rollout("chat-plain");
    const openai = client(t.apiKey);
    const asked = {
      model: "gpt-agent-default",
      tools: [bash],
      temperature: 1.3,
      top_p: 0.1,
      max_tokens: 9999,
    };
    const first = await openai.chat.completions.create({ ...asked, messages: firstTurn });
    const call = first.choices[0]?.message.tool_calls?.[0] as Loose;
    assert.equal(call.function.name, "bash");
    assert.deepEqual(JSON.parse(call.function.arguments), { command: "ls -la" });
    assert.equal((first.choices[0] as Loose).message.reasoning_content, "I should look first.");
    // Capture fields the agent did not ask for are not passed back.
    assert.equal((first as Loose).prompt_token_ids, undefined);
    assert.equal((first.choices[0] as Loose).token_ids, undefined);
    assert.equal(first.choices[0]?.logprobs, undefined);

    const second = await openai.chat.completions.create({
      ...asked,
      messages: [
        ...firstTurn,
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "a.txt\nb.txt" },
      ],
    });
    assert.equal(second.choices[0]?.message.content, "There are two files.");

    const upstream = h.endpoint.requests.slice(-2).map((r) => r.body);
    for (const body of upstream) {
      assert.equal(body.model, POLICY_MODEL);
      assert.equal(body.temperature, 0.2);
      assert.equal(body.top_p, 0.95);
      assert.equal(body.max_tokens, 256);
      assert.equal(body.logprobs, true);
      assert.equal(body.return_token_ids, true);
    }
    assert.deepEqual(upstream[1].messages.at(-1), {
      role: "tool",
      tool_call_id: call.id,
      content: "a.txt\nb.txt",
    });

    const lines = (await recorded(h, "chat-plain")) as Loose[];
    assert.equal(lines.length, 2);
    const [line] = lines;
    assert.equal(line.request.body.model, "gpt-agent-default");
    assert.equal(line.request.body.temperature, 1.3);
    assert.equal(line.request.headers.authorization, "[redacted]");
    assert.equal(line.response.status_code, 200);
    assert.equal(line.response.body.choices[0].message.tool_calls[0].function.name, "bash");
    assert.equal(line.response.body.prompt_token_ids, undefined);
    assert.equal(line.metadata.wire, "openai-chat");
    assert.equal(line.metadata.call_purpose, "agent");
    assert.equal(line.metadata.policy_version, "ckpt-7");
    assert.deepEqual(line.metadata.sampling, { temperature: 0.2, top_p: 0.95, max_tokens: 256 });
    assert.equal(line.metadata.upstream_request.body.model, POLICY_MODEL);
    assert.deepEqual(line.metadata.input_shape, { has_messages: true, has_input: false, n_messages: 2 });
    assert.equal(line.metadata.token_capture.schema_version, "benchflow.token_capture.v1");
    assert.deepEqual(line.metadata.token_capture.unavailable, {});
    assert.ok(typeof line.duration_ms === "number");

    const usage = h.gateway.usage("chat-plain");
    assert.equal(usage.calls, 2);
    assert.equal(usage.failedCalls, 0);
    assert.deepEqual(usage.policyVersions, ["ckpt-7"]);
    const inTok = lines.reduce((n, l) => n + l.metadata.usage.input_tokens, 0);
    const outTok = lines.reduce((n, l) => n + l.metadata.usage.output_tokens, 0);
    assert.ok(inTok > 0 && outTok > 0);
    assert.equal(usage.inputTokens, inTok);
    assert.equal(usage.outputTokens, outTok);
    assert.ok(Math.abs((usage.costUsd ?? 0) - (inTok + 2 * outTok) / 1e6) < 1e-12);
    const text = await readFile(t.file, "utf8");
    assert.ok(!text.includes(UPSTREAM_KEY) && !text.includes(t.apiKey));
  });

  it("streams tool calls and reasoning, passing back only what the agent asked for", async () => {
    const t = h.rollout("chat-stream");
    const openai = client(t.apiKey);
    const stream = await openai.chat.completions.create({
      model: "gpt-agent-default",
      tools: [bash],
      messages: firstTurn,
      stream: true,
    });
    let args = "";
    let name = "";
    let reasoning = "";
    for await (const chunk of stream as AsyncIterable<Loose>) {
      assert.ok(
        chunk.choices.length > 0,
        "no usage-only or ids-only chunk reaches an agent that did not ask",
      );
      assert.equal(chunk.prompt_token_ids, undefined);
      assert.equal(chunk.choices[0].token_ids, undefined);
      assert.equal(chunk.choices[0].logprobs, undefined);
      const delta = chunk.choices[0].delta;
      reasoning += delta.reasoning_content ?? "";
      for (const tc of delta.tool_calls ?? []) {
        name += tc.function?.name ?? "";
        args += tc.function?.arguments ?? "";
      }
    }
    assert.equal(name, "bash");
    assert.deepEqual(JSON.parse(args), { command: "ls -la" });
    assert.equal(reasoning, "I should look first.");

    // The agent that asks for logprobs and usage gets them (and the SDK assembles the stream).
    const runner = openai.chat.completions.stream({
      model: "x",
      tools: [bash],
      messages: firstTurn,
      logprobs: true,
      stream_options: { include_usage: true },
    });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0]?.message.tool_calls?.[0]?.function.name, "bash");
    assert.ok((final.choices[0]?.logprobs?.content?.length ?? 0) > 0);
    assert.ok((final.usage?.prompt_tokens ?? 0) > 0);

    const upstream = h.endpoint.requests.at(-1)?.body;
    assert.equal(upstream.stream, true);
    assert.deepEqual(upstream.stream_options, { include_usage: true });
    const [plain, asking] = (await recorded(h, "chat-stream")) as Loose[];
    assert.equal(plain.metadata.stream, true);
    const message = plain.response.body.choices[0].message;
    assert.equal(message.tool_calls[0].function.arguments, args);
    assert.equal(message.reasoning_content, "I should look first.");
    assert.equal(plain.response.body.choices[0].logprobs, undefined);
    assert.ok(asking.response.body.choices[0].logprobs.content.length > 0);
    assert.ok(plain.metadata.usage.input_tokens > 0);
  });

  it("serves GET /v1/models with the served model, for a rollout's credential", async () => {
    const t = h.rollout("chat-models");
    const models = await client(t.apiKey).models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      [POLICY_MODEL],
    );
    assert.deepEqual(await recorded(h, "chat-models"), []);
  });
});
