// An endpoint that speaks Anthropic Messages (Anthropic's own API): an Anthropic agent's calls pass
// through unconverted (what it sent is what the endpoint gets, what the endpoint sent is what it
// gets), a chat agent's are converted both ways; the answers are read from Anthropic's documented
// bodies and streams (test/fixtures/wire/anthropic/), usage with its cache reads and writes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { ChatAccumulator } from "./assemble.js";
import { MessageAssembler, MessagesToChunks, messageToCompletion } from "./outbound/messages-answer.js";
import { chatToMessages } from "./outbound/messages-request.js";
import { SseReader } from "./sse.js";
import { type Harness, type Loose, recorded, startHarness, UPSTREAM_KEY } from "./testing/harness.js";
import type { JsonObject } from "./types.js";

const WIRE = path.join(import.meta.dirname, "../../test/fixtures/wire/anthropic");
const fixture = (name: string): JsonObject => JSON.parse(readFileSync(path.join(WIRE, name), "utf8"));
const events = (name: string): JsonObject[] => {
  const reader = new SseReader();
  const data = [...reader.push(readFileSync(path.join(WIRE, name))), ...reader.end()];
  return data.map((d) => JSON.parse(d) as JsonObject);
};

describe("Messages answers read from Anthropic's documented shapes", () => {
  it("a streamed tool call becomes chat chunks that add up to the call, its text and its usage", () => {
    const toChunks = new MessagesToChunks();
    const acc = new ChatAccumulator();
    for (const e of events("stream.tool-use.sse")) for (const c of toChunks.chunks(e)) acc.add(c);
    assert.equal(toChunks.ended, true);
    const c = acc.toCompletion();
    const choice = c.choices[0] as Loose;
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, "I'll check the current weather in Paris for you.");
    assert.equal(choice.message.tool_calls[0].id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert.deepEqual(JSON.parse(choice.message.tool_calls[0].function.arguments), { location: "Paris" });
    assert.equal(c.model, "claude-sonnet-4-20250514");
    assert.equal(c.usage?.prompt_tokens, 377);
  });

  it("a streamed thinking block is reasoning; the passed-through assembly keeps its signature", () => {
    const toChunks = new MessagesToChunks();
    const acc = new ChatAccumulator();
    const message = new MessageAssembler();
    for (const e of events("stream.thinking.sse")) {
      for (const c of toChunks.chunks(e)) acc.add(c);
      message.add(e);
    }
    assert.ok((acc.toCompletion().choices[0]?.message.reasoning_content ?? "").length > 0);
    const thinking = (message.assembled().content as Loose[])[0];
    assert.equal(thinking.type, "thinking");
    assert.ok(thinking.signature.length > 0, "signature_delta is kept");
    assert.equal(message.ended, true);
  });

  it("a Message body is a chat completion: tool_use as tool_calls, stop_reason as finish_reason", () => {
    const c = messageToCompletion(fixture("response.tool-use.json")) as Loose;
    assert.equal(c.choices[0].finish_reason, "tool_calls");
    assert.equal(c.choices[0].message.tool_calls[0].id, "toolu_01A09q90qw90lq917835lq9");
    const text = messageToCompletion(fixture("response.text.json")) as Loose;
    assert.equal(text.choices[0].finish_reason, "stop");
    assert.equal(typeof text.choices[0].message.content, "string");
    assert.throws(() => messageToCompletion(fixture("error.json")), /could not be found/);
  });

  it("a mid-stream error event fails the stream with the endpoint's message", () => {
    const e = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    assert.throws(() => new MessagesToChunks().chunks(e), /mid-stream: Overloaded/);
  });

  it("a chat history converts to alternating turns, tool results after the call they answer", () => {
    const body = chatToMessages({
      model: "m",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "a.txt" },
        { role: "user", content: "go on" },
      ],
      tools: [{ type: "function", function: { name: "Bash", parameters: { type: "object" } } }],
      tool_choice: "required",
      stop: "END",
    }) as Loose;
    assert.equal(body.system, "be brief");
    assert.deepEqual(
      body.messages.map((m: Loose) => m.role),
      ["user", "assistant", "user"],
    );
    assert.deepEqual(body.messages[1].content[0], {
      type: "tool_use",
      id: "c1",
      name: "Bash",
      input: { command: "ls" },
    });
    assert.deepEqual(body.messages[2].content, [
      { type: "tool_result", tool_use_id: "c1", content: "a.txt" },
      { type: "text", text: "go on" },
    ]);
    assert.deepEqual(body.tools, [{ name: "Bash", input_schema: { type: "object" } }]);
    assert.deepEqual(body.tool_choice, { type: "any" });
    assert.deepEqual(body.stop_sequences, ["END"]);
    assert.equal(body.max_tokens, 4096, "the API requires max_tokens");
  });
});

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
    endpoint: { promptCache: "deepseek" },
    gateway: {
      upstream: { provider: "anthropic", model: "claude-sonnet-4-5", wire: "anthropic-messages" },
      sampling: { temperature: 0.5, maxTokens: 300, seed: 7 },
    },
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

const sentSince = (n: number) => h.endpoint.requests.slice(n);

describe("gateway: an endpoint that speaks Anthropic Messages", () => {
  it("an Anthropic agent's call passes through: its blocks and cache marks go as sent, the answer comes back as sent", async () => {
    const t = h.rollout("pass-plain");
    const anthropic = new Anthropic({
      baseURL: h.gateway.url,
      apiKey: t.apiKey,
      maxRetries: 0,
      timeout: 10_000,
    });
    const n = h.endpoint.requests.length;
    const system = [
      { type: "text" as const, text: "You are Claude Code.", cache_control: { type: "ephemeral" as const } },
    ];
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Please count lines of a.txt" }];
    const first = await anthropic.messages.create({
      model: "claude-opus-4-1",
      max_tokens: 32000,
      system,
      tools,
      messages,
    });
    const [sent] = sentSince(n);
    assert.equal(sent?.path, "/v1/messages");
    assert.equal(sent?.headers["x-api-key"], UPSTREAM_KEY, "the run's key, in Anthropic's header");
    assert.equal(sent?.headers["anthropic-version"], "2023-06-01");
    assert.equal(sent?.headers.authorization, undefined);
    assert.equal(sent?.body.model, "claude-sonnet-4-5");
    assert.deepEqual(
      [sent?.body.temperature, sent?.body.max_tokens],
      [0.5, 300],
      "the run's sampling over the agent's",
    );
    assert.equal(sent?.body.seed, undefined, "Messages has no seed");
    assert.deepEqual(sent?.body.system, system, "system blocks and cache_control unconverted");
    assert.deepEqual(sent?.body.tools, tools);
    assert.equal(first.id.startsWith("msg_"), true);
    const [thinking, , use] = first.content as Loose[];
    assert.equal(thinking.signature, "c2NyaXB0ZWQ=", "the endpoint's thinking signature reaches the agent");
    assert.equal(use.id.startsWith("toolu_"), true);
    assert.ok(
      (first.usage.cache_creation_input_tokens ?? 0) > 0,
      "the endpoint's own usage fields reach the agent",
    );

    messages.push({ role: "assistant", content: first.content as Loose });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: use.id, content: "3 a.txt" }],
    });
    const second = await anthropic.messages.create({ model: "x", max_tokens: 10, system, tools, messages });
    assert.deepEqual(second.content, [{ type: "text", text: "It has 3 lines." }]);
    const lines = (await recorded(h, "pass-plain")) as Loose[];
    assert.equal(lines.length, 2);
    assert.equal(lines[0].metadata.wire, "anthropic-messages");
    assert.deepEqual(lines[0].response.body, JSON.parse(JSON.stringify(first)));
    assert.ok(
      lines[1].metadata.usage.cache_read_tokens > 0,
      `cache reads are counted: ${JSON.stringify(lines[1].metadata.usage)}`,
    );
  });

  it("a streamed Anthropic call reaches the agent event for event, and the line holds the assembled Message", async () => {
    const t = h.rollout("pass-stream");
    const anthropic = new Anthropic({
      baseURL: h.gateway.url,
      apiKey: t.apiKey,
      maxRetries: 0,
      timeout: 10_000,
    });
    const stream = anthropic.messages.stream({
      model: "x",
      max_tokens: 100,
      tools,
      messages: [{ role: "user", content: "count lines" }],
    });
    const seen: string[] = [];
    stream.on("streamEvent", (e) => seen.push(e.type));
    const final = await stream.finalMessage();
    assert.deepEqual(seen.slice(0, 2), ["message_start", "content_block_start"]);
    assert.deepEqual((final.content[2] as Loose).input, { command: "wc -l a.txt" });
    const [line] = (await recorded(h, "pass-stream")) as Loose[];
    assert.equal(line.metadata.stream, true);
    assert.deepEqual(line.response.body.content, JSON.parse(JSON.stringify(final.content)));
    assert.equal(line.response.body.stop_reason, "tool_use");
  });

  it("a chat agent's calls are converted: the endpoint gets Messages, the agent gets chat (plain and streamed)", async () => {
    const t = h.rollout("convert");
    const openai = new OpenAI({
      baseURL: `${h.gateway.url}/v1`,
      apiKey: t.apiKey,
      maxRetries: 0,
      timeout: 10_000,
    });
    const chatTools = [
      { type: "function" as const, function: { name: "Bash", parameters: tools[0]?.input_schema as Loose } },
    ];
    const history: Loose[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "count lines of a.txt" },
    ];
    const n = h.endpoint.requests.length;
    const first = await openai.chat.completions.create({ model: "x", messages: history, tools: chatTools });
    const call = first.choices[0]?.message.tool_calls?.[0] as Loose;
    assert.equal(first.choices[0]?.finish_reason, "tool_calls");
    assert.deepEqual(JSON.parse(call.function.arguments), { command: "wc -l a.txt" });
    assert.equal(first.choices[0]?.message.content, "Counting.");
    history.push(first.choices[0]?.message, { role: "tool", tool_call_id: call.id, content: "3 a.txt" });
    const stream = await openai.chat.completions.create({
      model: "x",
      messages: history,
      tools: chatTools,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.equal(text, "It has 3 lines.");
    const [a, b] = sentSince(n);
    assert.equal(a?.path, "/v1/messages");
    assert.equal(a?.body.system, "be brief");
    assert.deepEqual(a?.body.tools, [{ name: "Bash", input_schema: tools[0]?.input_schema }]);
    assert.equal(b?.body.stream, true);
    assert.equal(b?.body.messages[2].content[0].tool_use_id, call.id, "the stand-in checked the tool_use id");
    const lines = (await recorded(h, "convert")) as Loose[];
    assert.equal(lines.length, 2);
    assert.ok(lines.every((l) => l.metadata.usage.input_tokens > 0 && l.metadata.usage.output_tokens > 0));
  });

  it("a Responses agent's call (Codex's dialect) is converted too", async () => {
    const t = h.rollout("responses");
    const openai = new OpenAI({ baseURL: `${h.gateway.url}/v1`, apiKey: t.apiKey, maxRetries: 0 });
    const n = h.endpoint.requests.length;
    const answer = await openai.responses.create({
      model: "x",
      instructions: "be brief",
      input: "count lines of a.txt",
    });
    const call = answer.output.find((o) => o.type === "function_call") as Loose;
    assert.equal(call?.name, "Bash");
    const [sent] = sentSince(n);
    assert.equal(sent?.path, "/v1/messages");
    assert.equal(sent?.body.system, "be brief");
  });

  it("a refused key is the endpoint's 401, a config fault, in the agent's own dialect", async () => {
    const bad = await startHarness({
      gateway: {
        upstream: { provider: "anthropic", model: "m", wire: "anthropic-messages", apiKey: "sk-wrong" },
      },
      script: { conversations: [{ replies: [{ content: "hi" }] }] },
    });
    try {
      const t = bad.rollout("refused");
      const anthropic = new Anthropic({
        baseURL: bad.gateway.url,
        apiKey: t.apiKey,
        maxRetries: 0,
        timeout: 10_000,
      });
      await assert.rejects(
        anthropic.messages.create({ model: "x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
        (err: Loose) => err.status === 401 && /invalid x-api-key/.test(err.message),
      );
      assert.equal(bad.gateway.witness("refused").last?.fault, "config");
      const [line] = (await recorded(bad, "refused")) as Loose[];
      assert.equal(line.response.status_code, 401);
    } finally {
      await bad.close();
    }
  });

  it("Anthropic's 529 (overloaded) is retried like a 503: the agent sees only the answer", async () => {
    const busy = await startHarness({
      gateway: { upstream: { provider: "anthropic", model: "m", wire: "anthropic-messages" } },
      script: {
        conversations: [{ replies: [{ fail: { status: 529 }, times: 1 }, { content: "after the wait" }] }],
      },
    });
    try {
      const t = busy.rollout("overloaded");
      const anthropic = new Anthropic({
        baseURL: busy.gateway.url,
        apiKey: t.apiKey,
        maxRetries: 0,
        timeout: 10_000,
      });
      const answer = await anthropic.messages.create({
        model: "x",
        max_tokens: 5,
        messages: [{ role: "user", content: "hi" }],
      });
      assert.deepEqual(answer.content, [{ type: "text", text: "after the wait" }]);
      assert.equal(busy.endpoint.requests.filter((r) => r.path === "/v1/messages").length, 2);
    } finally {
      await busy.close();
    }
  });
});
