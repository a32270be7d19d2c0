// Gemini's generateContent through the gateway (what Gemini CLI speaks), driven by Google's own SDK
// (@google/genai 1.30.0, the version inside Gemini CLI 0.61.0): function calls and their responses
// round-trip through chat, streamed and not, errors come back in Google's shape, and the recorded
// calls read back as training conversations.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GoogleGenAI, Type } from "@google/genai";
import { conversationOf } from "../jobs-dir/conversation/index.js";
import type { Exchange } from "../jobs-dir/exchange.js";
import { type Harness, type Loose, POLICY_MODEL, recorded, startHarness } from "./testing/harness.js";

const weather = {
  name: "get_weather",
  description: "The weather of a city",
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ["city"] },
};

let h: Harness;
before(async () => {
  h = await startHarness({
    gateway: { sampling: { temperature: 0.3, maxTokens: 77 } },
    script: {
      conversations: [
        {
          match: "weather in Paris",
          replies: [
            {
              reasoning: "Look it up.",
              content: "Checking.",
              tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
            },
            { content: "It is sunny in Paris." },
          ],
        },
      ],
    },
  });
});
after(() => h.close());

const client = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: h.gateway.url } });

describe("gateway: Gemini generateContent", () => {
  it("round-trips a function call and its response, not streamed; the policy sees chat", async () => {
    const t = h.rollout("gem-plain");
    const ai = client(t.apiKey);
    const config = {
      systemInstruction: "Answer briefly.",
      tools: [{ functionDeclarations: [weather] }],
      topK: 40,
    };
    const user = { role: "user", parts: [{ text: "What is the weather in Paris?" }] };
    const first = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: [user], config });
    assert.deepEqual(
      first.functionCalls?.map((c) => [c.name, c.args]),
      [["get_weather", { city: "Paris" }]],
    );
    assert.equal(first.text, "Checking.");
    assert.equal(first.candidates?.[0]?.finishReason, "STOP");
    assert.ok((first.usageMetadata?.promptTokenCount ?? 0) > 0);
    const call = first.functionCalls?.[0] as Loose;
    const second = await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: [
        user,
        first.candidates?.[0]?.content as Loose,
        {
          role: "user",
          parts: [{ functionResponse: { id: call.id, name: "get_weather", response: { output: "sunny" } } }],
        },
      ],
      config,
    });
    assert.equal(second.text, "It is sunny in Paris.");

    const [req1, req2] = h.endpoint.requests.slice(-2).map((r) => r.body);
    assert.equal(req1.model, POLICY_MODEL);
    assert.deepEqual([req1.temperature, req1.max_tokens], [0.3, 77]);
    assert.deepEqual(req1.messages[0], { role: "system", content: "Answer briefly." });
    assert.equal(req1.tools[0].function.name, "get_weather");
    assert.equal(
      req1.tools[0].function.parameters.type,
      "object",
      "OpenAPI's OBJECT is JSON Schema's object",
    );
    assert.equal(req1.top_k, undefined, "topK never reaches the policy");
    const assistant = req2.messages[2];
    assert.equal(assistant.reasoning_content, "Look it up.");
    assert.equal(assistant.tool_calls[0].id, call.id);
    assert.deepEqual(req2.messages[3], { role: "tool", tool_call_id: call.id, content: "sunny" });

    const lines = (await recorded(h, "gem-plain")) as Loose[];
    assert.equal(lines[0].metadata.wire, "gemini-generate-content");
    assert.deepEqual(lines[0].metadata.dropped_fields, ["generationConfig.topK"]);
    assert.equal(lines[0].request.headers["x-goog-api-key"], "[redacted]");
    // The read model reads the recorded call back as a training conversation.
    const conv = conversationOf({
      index: 1,
      request: lines[1].request,
      response: lines[1].response,
      metadata: lines[1].metadata,
    } as Exchange);
    assert.deepEqual(
      conv.messages.map((m) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(conv.messages[2]?.tool_calls?.[0]?.id, conv.messages[3]?.tool_call_id);
    assert.equal(conv.assistant?.content, "It is sunny in Paris.");
    assert.equal(conv.tools[0]?.function.name, "get_weather");
  });

  it("streams text as it comes and the function call whole in the last event, as Gemini does", async () => {
    const t = h.rollout("gem-stream");
    const stream = await client(t.apiKey).models.generateContentStream({
      model: "gemini-2.5-flash",
      contents: "What is the weather in Paris?",
      config: { tools: [{ functionDeclarations: [weather] }] },
    });
    const chunks: Loose[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.length >= 2);
    const text = chunks
      .map(
        (c) =>
          c.candidates?.[0]?.content?.parts
            ?.filter((p: Loose) => !p.thought)
            .map((p: Loose) => p.text ?? "")
            .join("") ?? "",
      )
      .join("");
    assert.equal(text, "Checking.");
    const last = chunks[chunks.length - 1];
    assert.equal(last.candidates[0].finishReason, "STOP");
    assert.deepEqual(
      last.functionCalls?.map((c: Loose) => c.args),
      [{ city: "Paris" }],
    );
    assert.ok(last.usageMetadata.totalTokenCount > 0);
    const [line] = (await recorded(h, "gem-stream")) as Loose[];
    assert.equal(line.metadata.stream, true);
    assert.equal(line.request.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    assert.equal(line.response.body.candidates[0].content.parts.at(-1).functionCall.name, "get_weather");
  });

  it("a refused credential and an unknown path answer in Google's error shape", async () => {
    await assert.rejects(
      client("bf-not-a-rollout").models.generateContent({ model: "m", contents: "hi" }),
      (err: Loose) => err.status === 401 && /unknown credential/.test(err.message),
    );
    const res = await fetch(`${h.gateway.url}/v1beta/models/m:embedContent`, { method: "POST", body: "{}" });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as Loose).error.status, "NOT_FOUND");
  });
});
