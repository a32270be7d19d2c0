// The documented wire formats pin the gateway's inbound dialects: requests copied from OpenAI's and
// Anthropic's docs are replayed raw, and the answers must have the documented shapes and event flows.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { type Harness, type Loose, recorded, startHarness } from "./testing/harness.js";
import {
  assertAnthropicFlow,
  assertCovers,
  assertRequired,
  assertResponsesFlow,
  fixture,
  parseSse,
  type SseEvent,
  sseFixture,
  WIRE_DIR,
} from "./testing/wire.js";

const weatherCall = { name: "get_weather", arguments: { location: "San Francisco, CA", unit: "celsius" } };
let h: Harness;
let key: string;

before(async () => {
  h = await startHarness({
    gateway: { capture: { enabled: true } },
    script: {
      conversations: [
        { match: "Hello", replies: [{ content: "Hello! How can I assist you today?" }] },
        {
          match: "weather like in Boston",
          replies: [
            {
              tool_calls: [
                { name: "get_current_weather", arguments: { location: "Boston, MA", unit: "celsius" } },
              ],
            },
            { content: "22 and sunny." },
          ],
        },
        {
          match: "weather like in San Francisco",
          replies: [
            {
              content: "I'll check the current weather in San Francisco for you.",
              tool_calls: [weatherCall],
            },
            { content: "It is 15 degrees." },
          ],
        },
        {
          match: "woodchuck",
          replies: [{ reasoning: "A classic riddle.", content: "A woodchuck would chuck..." }],
        },
        {
          match: "27 * 453",
          replies: [{ reasoning: "Let me solve this step by step", content: "27 * 453 = 12,231" }],
        },
        { replies: [{ content: "In a peaceful grove beneath a silver moon..." }] },
      ],
    },
  });
  key = h.rollout("wire").apiKey;
});
after(() => h.close());

async function post(
  pathname: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${h.gateway.url}${pathname}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

async function events(res: Response): Promise<SseEvent[]> {
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  return parseSse(await res.text());
}

// Fields a vendor's own API adds that an OpenAI-compatible policy server does not (the chat dialect
// passes the policy's answer through).
const CHAT_VENDOR = [
  "service_tier",
  "system_fingerprint",
  "obfuscation",
  "usage.*",
  "choices.*.message.annotations",
];
const chatSpec = fixture("openai-chat/spec-required-fields.json").objects;

describe("wire fixtures: OpenAI chat", () => {
  it("answers the documented requests with the documented shapes", async () => {
    for (const name of ["text", "tools"]) {
      const res = await post("/v1/chat/completions", fixture(`openai-chat/request.${name}.json`));
      assert.equal(res.status, 200);
      const ours = (await res.json()) as Loose;
      assertCovers(fixture(`openai-chat/response.${name}.json`), ours, CHAT_VENDOR);
      assertRequired(chatSpec.CreateChatCompletionResponse, ours, "chat completion");
      assertRequired(chatSpec.CompletionUsage, ours.usage, "usage");
    }
    const res = await post("/v1/chat/completions", fixture("openai-chat/request.tool-result.json"));
    assert.equal(((await res.json()) as Loose).choices[0].message.content, "22 and sunny.");
    const sent = h.endpoint.requests.at(-1)?.body;
    assert.deepEqual(sent.messages.at(-1), fixture("openai-chat/request.tool-result.json").messages.at(-1));
  });

  it("streams chunks shaped like the documented ones, ending with [DONE]", async () => {
    const text = await events(await post("/v1/chat/completions", fixture("openai-chat/request.stream.json")));
    assert.deepEqual(text.at(-1), { event: null, data: "[DONE]" });
    const chunks = text.slice(0, -1).map((e) => JSON.parse(e.data));
    const doc = sseFixture("openai-chat/stream.text.sse");
    assertCovers(doc[0], chunks[0], CHAT_VENDOR);
    assertCovers(doc[1], chunks[1], CHAT_VENDOR);
    assertCovers(doc.at(-1), chunks.at(-1), CHAT_VENDOR);
    for (const chunk of chunks) assertRequired(chatSpec.CreateChatCompletionStreamResponse, chunk, "chunk");

    const tools = { ...fixture("openai-chat/request.tools.json"), stream: true };
    const toolChunks = (await events(await post("/v1/chat/completions", tools)))
      .slice(0, -1)
      .map((e) => JSON.parse(e.data));
    const docTools = sseFixture("openai-chat/stream.tools.sse");
    const opening = toolChunks.find((c) => c.choices[0]?.delta?.tool_calls?.[0]?.id);
    const argument = toolChunks.find(
      (c) =>
        c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments && !c.choices[0].delta.tool_calls[0].id,
    );
    // vLLM sends the role in a chunk of its own before the first tool-call delta; OpenAI merges them.
    assertCovers(docTools[0], opening, [...CHAT_VENDOR, "choices.*.delta.refusal", "choices.*.delta.role"]);
    assertCovers(docTools[1], argument, CHAT_VENDOR);
    assertCovers(docTools.at(-1), toolChunks.at(-1), CHAT_VENDOR);
  });

  it("refuses a bad credential with the documented error shape", async () => {
    const res = await post("/v1/chat/completions", fixture("openai-chat/request.text.json"), {
      authorization: "Bearer nope",
    });
    assert.equal(res.status, 401);
    const ours = await res.json();
    assertCovers(fixture("openai-chat/error.json"), ours);
    assertRequired(chatSpec.Error, (ours as Loose).error, "error");
  });
});

const responsesSpec = fixture("openai-responses/spec-required-fields.json");
const RESPONSES_VENDOR = ["usage.input_tokens_details.cache_write_tokens", "tools.*.strict"];

describe("wire fixtures: OpenAI Responses", () => {
  it("answers the documented requests with the documented shapes", async () => {
    for (const name of ["text", "tools", "reasoning"]) {
      const res = await post("/v1/responses", fixture(`openai-responses/request.${name}.json`));
      assert.equal(res.status, 200, name);
      const ours = (await res.json()) as Loose;
      assertCovers(fixture(`openai-responses/response.${name}.json`), ours, RESPONSES_VENDOR);
      const o = responsesSpec.objects;
      assertRequired(o.Response, ours, "response");
      assertRequired(o.ResponseUsage, ours.usage, "usage");
      for (const item of ours.output) {
        const required = {
          message: o.OutputMessage,
          function_call: o.FunctionToolCall,
          reasoning: o.ReasoningItem,
        }[item.type as string];
        assertRequired(required ?? [], item, item.type);
        if (item.type === "message") assertRequired(o.OutputTextContent, item.content[0], "output_text");
      }
    }
    await post("/v1/responses", fixture("openai-responses/request.function-call-output.json"));
    const sent = h.endpoint.requests.at(-1)?.body;
    const output = fixture("openai-responses/request.function-call-output.json").input[2];
    assert.deepEqual(sent.messages.at(-1), {
      role: "tool",
      tool_call_id: output.call_id,
      content: output.output,
    });
    assert.equal(sent.messages.at(-2).tool_calls[0].id, output.call_id);
  });

  it("the flow checker accepts the documented stream", () => {
    const text = readFileSync(path.join(WIRE_DIR, "openai-responses/stream.text.sse"), "utf8");
    assertResponsesFlow(parseSse(text), {});
  });

  it("streams the documented event flow, with every field the spec requires", async () => {
    const stream = await events(await post("/v1/responses", fixture("openai-responses/request.stream.json")));
    const ours = assertResponsesFlow(stream, responsesSpec.events);
    const doc = sseFixture("openai-responses/stream.text.sse");
    for (const documented of doc) {
      const mine = ours.find((e) => e.type === documented.type);
      assert.ok(mine, `no ${documented.type} event`);
      assertCovers(documented, mine, [...RESPONSES_VENDOR, "response.usage.*"]);
    }
    const examples = fixture("openai-responses/events.spec-examples.json").examples;
    assertCovers(
      examples.ResponseOutputItemAddedEvent,
      ours.find((e) => e.type === "response.output_item.added"),
    );

    const tools = { ...fixture("openai-responses/request.tools.json"), stream: true };
    const toolEvents = assertResponsesFlow(
      await events(await post("/v1/responses", tools)),
      responsesSpec.events,
    );
    for (const [name, type] of [
      ["ResponseFunctionCallArgumentsDeltaEvent", "response.function_call_arguments.delta"],
      ["ResponseFunctionCallArgumentsDoneEvent", "response.function_call_arguments.done"],
    ]) {
      assertCovers(
        examples[name as string],
        toolEvents.find((e) => e.type === type),
      );
    }
    const done = toolEvents.find((e) => e.type === "response.output_item.done").item;
    assertCovers(fixture("openai-responses/response.tools.json").output[0], done);
    const reasoningStream = { ...fixture("openai-responses/request.reasoning.json"), stream: true };
    const reasoning = assertResponsesFlow(
      await events(await post("/v1/responses", reasoningStream)),
      responsesSpec.events,
    );
    assertCovers(
      examples.ResponseReasoningTextDeltaEvent,
      reasoning.find((e) => e.type === "response.reasoning_text.delta"),
    );
    assertCovers(
      examples.ResponseReasoningTextDoneEvent,
      reasoning.find((e) => e.type === "response.reasoning_text.done"),
    );
  });
});

const ANTHROPIC_VENDOR = [
  "message.usage.service_tier",
  "message.usage.cache_creation_input_tokens",
  "message.usage.cache_read_input_tokens",
  "content_block.caller",
];
const anthropicHeaders = { "x-api-key": "", "anthropic-version": "2023-06-01" };

describe("wire fixtures: Anthropic Messages", () => {
  const postMessages = (body: unknown) =>
    post("/v1/messages?beta=true", body, { ...anthropicHeaders, "x-api-key": key, authorization: "" });

  it("the flow checker accepts the documented streams", () => {
    for (const name of ["text", "tool-use", "thinking"]) {
      assertAnthropicFlow(
        parseSse(readFileSync(path.join(WIRE_DIR, `anthropic/stream.${name}.sse`), "utf8")),
      );
    }
  });

  it("answers the documented requests with the documented shapes", async () => {
    const text = await postMessages(fixture("anthropic/request.text.json"));
    assertCovers(fixture("anthropic/response.text.json"), await text.json());
    const tools = await postMessages({ ...fixture("anthropic/request.tools.json"), stream: false });
    const toolAnswer = (await tools.json()) as Loose;
    assertCovers(fixture("anthropic/response.tool-use.json"), toolAnswer);
    assert.deepEqual(toolAnswer.content[1].input, weatherCall.arguments);
    assert.equal(
      h.endpoint.requests.at(-1)?.body.tool_choice,
      "required",
      "tool_choice any is chat's required",
    );

    const result = await postMessages(fixture("anthropic/request.tool-result.json"));
    assertCovers(fixture("anthropic/response.text.json"), await result.json());
    const sent = h.endpoint.requests.at(-1)?.body;
    assert.deepEqual(sent.messages.at(-1), {
      role: "tool",
      tool_call_id: "toolu_01A09q90qw90lq917835lq9",
      content: "15 degrees",
    });
  });

  it("streams the documented event flow with documented event shapes", async () => {
    for (const [request, docStream, extra] of [
      [fixture("anthropic/request.stream.json"), "anthropic/stream.text.sse", {}],
      [fixture("anthropic/request.tools.json"), "anthropic/stream.tool-use.sse", {}],
      [
        fixture("anthropic/request.text.json"),
        "anthropic/stream.thinking.sse",
        { stream: true, messages: [{ role: "user", content: "What is 27 * 453?" }] },
      ],
    ] as const) {
      const ours = assertAnthropicFlow(await events(await postMessages({ ...request, ...extra })));
      for (const documented of sseFixture(docStream)) {
        if (documented.type === "ping" || documented.delta?.type === "signature_delta") continue;
        const kind = documented.content_block?.type ?? documented.delta?.type;
        const mine = ours.find(
          (e) => e.type === documented.type && (e.content_block?.type ?? e.delta?.type) === kind,
        );
        assert.ok(mine, `no ${documented.type} ${kind ?? ""} event`);
        assertCovers(documented, mine, ANTHROPIC_VENDOR);
      }
    }
  });

  it("refuses a bad credential with the documented error shape", async () => {
    const res = await post("/v1/messages", fixture("anthropic/request.text.json"), {
      ...anthropicHeaders,
      "x-api-key": "nope",
      authorization: "",
    });
    assert.equal(res.status, 401);
    assertCovers(fixture("anthropic/error.json"), await res.json());
  });

  it("recorded every replayed call with its capture block", async () => {
    const lines = (await recorded(h, "wire")) as Loose[];
    assert.ok(lines.length >= 15);
    for (const line of lines) assert.deepEqual(line.metadata.token_capture.unavailable, {});
  });
});
