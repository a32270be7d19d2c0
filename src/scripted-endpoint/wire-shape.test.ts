// Our responses against responses real servers sent (test/fixtures/wire/vllm/, sources in its README):
// same keys, same nesting, same types. Deviations are listed per check, each with its reason.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type ScriptedEndpoint, startScriptedEndpoint } from "./scripted-server.js";
import { type ShapeOptions, shapeMismatches } from "./testing/wire-shape.js";

type Wire = any;

const fixture = (name: string): Wire =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/wire/vllm/${name}`, import.meta.url), "utf8"));

// Fields of vLLM's current ChatMessage / ChatCompletionResponse (vllm/entrypoints/openai/chat_completion/
// protocol.py) that older servers in the fixtures did not send yet.
const NEWER_VLLM_FIELDS = [
  "refusal",
  "annotations",
  "audio",
  "function_call",
  "reasoning",
  "token_ids",
  "service_tier",
  "system_fingerprint",
  "prompt_token_ids",
  "kv_transfer_params",
];

let endpoint: ScriptedEndpoint;
before(async () => {
  endpoint = await startScriptedEndpoint({
    script: {
      conversations: [
        {
          match: "tool",
          replies: [{ tool_calls: [{ name: "get_weather", arguments: { city: "New York" } }] }],
        },
        { replies: [{ reasoning: "A greeting.", content: "Hello! How can I help you today?" }] },
      ],
    },
  });
});
after(() => endpoint.close());

async function post(body: Record<string, unknown>): Promise<Wire> {
  const res = await fetch(`${endpoint.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", ...body }),
  });
  assert.equal(res.status, 200);
  return res.json();
}

async function postStream(body: Record<string, unknown>): Promise<Wire[]> {
  const res = await fetch(`${endpoint.baseUrl}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, ...body }),
  });
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = (await res.text()).split("\n\n").filter(Boolean);
  assert.equal(events.at(-1), "data: [DONE]");
  return events.slice(0, -1).map((event) => {
    assert.ok(event.startsWith("data: "), event);
    return JSON.parse(event.slice("data: ".length));
  });
}

function assertShape(actual: unknown, example: unknown, options?: ShapeOptions): void {
  assert.deepEqual(shapeMismatches(actual, example, options), []);
}

const hello = [{ role: "user", content: "Hello!" }];
const isIntArray = (value: unknown) => Array.isArray(value) && value.every(Number.isInteger);

describe("wire shape against real server responses", () => {
  it("the shape check itself notices missing keys, extra keys and wrong types", () => {
    assert.deepEqual(shapeMismatches({ a: 1, b: [{ c: "x" }] }, { a: 1, b: [{ c: "y" }] }), []);
    assert.equal(shapeMismatches({ a: "1" }, { a: 1 }).length, 1);
    assert.equal(shapeMismatches({}, { a: 1 }).length, 1);
    assert.equal(shapeMismatches({ a: 1, z: 2 }, { a: 1 }).length, 1);
    assert.equal(shapeMismatches({ b: [{ c: 3 }] }, { b: [{ c: "y" }] }).length, 1);
  });

  it("non-streamed reply with return_token_ids matches vLLM's (vllm#28246)", async () => {
    const ours = await post({ messages: hello, return_token_ids: true });
    // `reasoning` is the field's name since vLLM 0.11; the fixture's excerpt ends at prompt_token_ids.
    assertShape(ours, fixture("chat-completion.return-token-ids.json"), {
      allowExtra: ["reasoning", "kv_transfer_params"],
    });
    // token_ids is null in that response (the bug the issue reports); vLLM's model types it list[int].
    assert.ok(isIntArray(ours.choices[0].token_ids) && isIntArray(ours.prompt_token_ids));
  });

  it("non-streamed tool call matches vLLM's", async () => {
    const ours = await post({ messages: [{ role: "user", content: "tool please" }] });
    // stop_reason is int | str | None in vLLM: the stop token when it is not the model's EOS, else null.
    assertShape(ours, fixture("chat-completion.tool-call.json"), {
      allowExtra: NEWER_VLLM_FIELDS,
      nullable: ["stop_reason"],
    });
    assert.equal(typeof ours.choices[0].message.tool_calls[0].function.arguments, "string");
  });

  it("logprobs match OpenAI's documented shape exactly", async () => {
    const ours = await post({ messages: hello, logprobs: true, top_logprobs: 2 });
    assertShape(ours.choices[0].logprobs, fixture("chat-completion.logprobs.json").choices[0].logprobs);
  });

  it("streamed content chunks with token ids and continuous usage match vLLM's", async () => {
    const chunks = await postStream({
      messages: hello,
      return_token_ids: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    assert.ok(content.length > 1);
    for (const chunk of content)
      assertShape(chunk, fixture("chat-completion-chunks.return-token-ids.json")[0]);
  });

  it("first and last streamed chunks match OpenAI's documented stream", async () => {
    const chunks = await postStream({ messages: hello, return_token_ids: true });
    const docs = fixture("chat-completion-chunks.openai-docs.json");
    // vLLM's chunks carry no system_fingerprint; prompt ids ride on the first chunk (vLLM's serving.py).
    const options = {
      allowMissing: ["system_fingerprint"],
      allowExtra: ["prompt_token_ids", "stop_reason", "token_ids"],
    };
    assertShape(chunks[0], docs[0], options);
    assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
    assert.ok(isIntArray(chunks[0].prompt_token_ids));
    assert.ok(chunks.slice(1).every((c) => !("prompt_token_ids" in c)));
    assertShape(chunks.at(-1), docs[2], options);
  });

  it("streamed reasoning deltas carry vLLM's reasoning fields", async () => {
    const chunks = await postStream({ messages: hello });
    const reasoning = chunks.filter((c) => c.choices[0]?.delta.reasoning);
    assert.ok(reasoning.length > 0);
    for (const chunk of reasoning) {
      assert.deepEqual(Object.keys(chunk.choices[0].delta).sort(), ["reasoning", "reasoning_content"]);
    }
  });

  it("streamed tool calls match vLLM's deltas", async () => {
    const chunks = await postStream({
      messages: [{ role: "user", content: "tool please" }],
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const real = fixture("chat-completion-chunks.tool-call.json");
    // token_ids is null unless asked for (newer vLLM always sends the key); OpenAI's first tool delta
    // carries arguments: "" where this older vLLM left it out.
    const options = { allowExtra: ["token_ids", "arguments"] };
    assertShape(chunks[0], real[0], options);
    assertShape(chunks[1], real[1], options);
    assertShape(chunks[2], real[2], options);
    // That server sent an empty arguments fragment with the finish; ours sends only <|im_end|>, with the
    // empty delta of OpenAI's documented stream.
    assertShape(chunks.at(-2), real.at(-2), {
      allowExtra: ["token_ids"],
      allowMissing: ["tool_calls"],
      nullable: ["stop_reason"],
    });
    assert.deepEqual(chunks.at(-2).choices[0].delta, {});
    assertShape(chunks.at(-1), real.at(-1));
  });

  it("/v1/models matches vLLM's model list", async () => {
    const res = await fetch(`${endpoint.baseUrl}/models`);
    assertShape(await res.json(), fixture("models.json"));
  });
});
