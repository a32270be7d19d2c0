// The official openai client is the real program talking to the scripted endpoint here.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { detokenize, IM_END_ID } from "./chat-template.js";
import { type ScriptedEndpoint, startScriptedEndpoint } from "./scripted-server.js";

// vLLM's extensions travel in the request body; the client passes unknown fields through unchanged.
type Wire = any;

const tools = [
  { type: "function" as const, function: { name: "bash", parameters: { type: "object", properties: {} } } },
  { type: "function" as const, function: { name: "submit", parameters: { type: "object", properties: {} } } },
];

let endpoint: ScriptedEndpoint;
let client: OpenAI;

before(async () => {
  endpoint = await startScriptedEndpoint({
    model: "policy-7b",
    versionHeader: "ckpt-7",
    script: {
      conversations: [
        {
          match: "hello task",
          replies: [
            {
              tool_calls: [{ name: "bash", arguments: { command: "echo 'Hello, world!' > /app/hello.txt" } }],
            },
            { reasoning: "It worked.", tool_calls: [{ name: "submit", arguments: {} }] },
            { content: "Finished." },
          ],
        },
        { match: "fail 503", replies: [{ fail: { status: 503, body: "engine overloaded" } }] },
        { match: "hang", replies: [{ hang: true }] },
        { match: "malformed", replies: [{ malformed: true }] },
        { replies: [{ content: "Hello wörld, from the scripted policy!" }] },
      ],
    },
  });
  client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: "unused", maxRetries: 0, timeout: 10_000 });
});
after(() => endpoint.close());

const ask = (text: string) => [{ role: "user" as const, content: text }];

async function collect(stream: AsyncIterable<Wire>): Promise<Wire[]> {
  const chunks: Wire[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("scripted endpoint over HTTP", () => {
  it("answers non-streamed with token ids, logprobs, usage and the version header", async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: "anything",
        messages: ask("hi"),
        logprobs: true,
        top_logprobs: 3,
        return_token_ids: true,
      } as Wire)
      .withResponse();
    const body = data as Wire;
    const choice = body.choices[0];
    assert.equal(response.headers.get("x-policy-version"), "ckpt-7");
    assert.equal(body.model, "policy-7b");
    assert.equal(choice.message.content, "Hello wörld, from the scripted policy!");
    assert.equal(choice.finish_reason, "stop");
    assert.equal(detokenize(choice.token_ids), `${choice.message.content}<|im_end|>`);
    assert.ok(
      detokenize(body.prompt_token_ids).endsWith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
    );
    assert.deepEqual(body.usage, {
      prompt_tokens: body.prompt_token_ids.length,
      total_tokens: body.prompt_token_ids.length + choice.token_ids.length,
      completion_tokens: choice.token_ids.length,
      prompt_tokens_details: null,
    });
    const content = choice.logprobs.content;
    assert.equal(content.length, choice.token_ids.length);
    for (const entry of content) {
      assert.ok(entry.logprob < 0);
      assert.equal(entry.top_logprobs.length, 3);
      assert.deepEqual(entry.top_logprobs[0], {
        token: entry.token,
        logprob: entry.logprob,
        bytes: entry.bytes,
      });
    }
    const again = (await client.chat.completions.create({
      model: "x",
      messages: ask("hi"),
      logprobs: true,
    } as Wire)) as Wire;
    assert.deepEqual(
      again.choices[0].logprobs.content.map((e: Wire) => e.logprob),
      content.map((e: Wire) => e.logprob),
    );
    assert.deepEqual(again.choices[0].logprobs.content[0].top_logprobs, []);
    assert.equal(again.choices[0].token_ids, null);
    assert.equal(again.prompt_token_ids, null);
  });

  it("streams the same reply as chunks, with prompt ids first, token id deltas and a usage chunk", async () => {
    const plain = (await client.chat.completions.create({
      model: "x",
      messages: ask("hi"),
      return_token_ids: true,
    } as Wire)) as Wire;
    const chunks = await collect(
      (await client.chat.completions.create({
        model: "x",
        messages: ask("hi"),
        stream: true,
        stream_options: { include_usage: true },
        logprobs: true,
        return_token_ids: true,
      } as Wire)) as Wire,
    );
    assert.deepEqual(chunks[0].prompt_token_ids, plain.prompt_token_ids);
    assert.ok(chunks.slice(1).every((c) => !("prompt_token_ids" in c)));
    const withChoice = chunks.filter((c) => c.choices.length > 0);
    const ids = withChoice.flatMap((c) => c.choices[0].token_ids ?? []);
    assert.deepEqual(ids, plain.choices[0].token_ids);
    assert.equal(
      withChoice.map((c) => c.choices[0].delta.content ?? "").join(""),
      plain.choices[0].message.content,
    );
    for (const c of withChoice.slice(1))
      assert.equal(c.choices[0].logprobs.content.length, c.choices[0].token_ids.length);
    assert.equal(withChoice.at(-1).choices[0].finish_reason, "stop");
    assert.deepEqual(chunks.at(-1).usage, {
      prompt_tokens: plain.prompt_token_ids.length,
      total_tokens: plain.prompt_token_ids.length + ids.length,
      completion_tokens: ids.length,
    });
  });

  it("returns tool calls in OpenAI's shape, streamed as an id/name delta then argument fragments", async () => {
    const body = (await client.chat.completions.create({
      model: "x",
      messages: ask("hello task"),
      tools,
    })) as Wire;
    const [call] = body.choices[0].message.tool_calls;
    assert.equal(body.choices[0].finish_reason, "tool_calls");
    assert.equal(body.choices[0].message.content, null);
    assert.match(call.id, /^call_0_0_[0-9a-f]{8}$/);
    assert.deepEqual(JSON.parse(call.function.arguments), {
      command: "echo 'Hello, world!' > /app/hello.txt",
    });

    const chunks = await collect(
      (await client.chat.completions.create({
        model: "x",
        messages: ask("hello task"),
        tools,
        stream: true,
      })) as Wire,
    );
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(deltas[0], {
      index: 0,
      id: call.id,
      type: "function",
      function: { name: "bash", arguments: "" },
    });
    assert.ok(deltas.length > 2, "arguments arrive in several fragments");
    assert.ok(deltas.slice(1).every((d: Wire) => d.id === undefined && d.function.name === undefined));
    assert.equal(deltas.map((d: Wire) => d.function.arguments).join(""), call.function.arguments);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");

    const other = (await client.chat.completions.create({
      model: "x",
      messages: ask("hello task, again"),
      tools,
    })) as Wire;
    assert.notEqual(other.choices[0].message.tool_calls[0].id, call.id);
  });

  it("keeps prompt ids = previous prompt + previous sampled ids across a 3-turn agent loop", async () => {
    const messages: Wire[] = [{ role: "system", content: "You are an agent." }, ...ask("hello task")];
    let previous: number[] | undefined;
    const finals: string[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const stream = turn === 1;
      const request = { model: "x", messages, tools, return_token_ids: true, logprobs: true } as Wire;
      let message: Wire;
      let prompt: number[];
      let sampled: number[];
      if (stream) {
        const chunks = await collect((await client.chat.completions.create({ ...request, stream })) as Wire);
        prompt = chunks[0].prompt_token_ids;
        sampled = chunks.flatMap((c) => c.choices[0]?.token_ids ?? []);
        const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
        const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning ?? "").join("");
        message = {
          role: "assistant",
          content: null,
          reasoning,
          tool_calls: [
            {
              id: calls[0].id,
              type: "function",
              function: {
                name: calls[0].function.name,
                arguments: calls.map((c: Wire) => c.function.arguments).join(""),
              },
            },
          ],
        };
      } else {
        const body = (await client.chat.completions.create(request)) as Wire;
        prompt = body.prompt_token_ids;
        sampled = body.choices[0].token_ids;
        message = body.choices[0].message;
      }
      if (previous)
        assert.deepEqual(prompt.slice(0, previous.length), previous, `turn ${turn} extends the last call`);
      assert.equal(sampled.at(-1), IM_END_ID);
      previous = [...prompt, ...sampled];
      messages.push(message);
      if (message.tool_calls?.length) {
        messages.push({ role: "tool", tool_call_id: message.tool_calls[0].id, content: `ok ${turn}` });
      } else {
        finals.push(message.content);
      }
    }
    assert.deepEqual(finals, ["Finished."]);
    messages.push({ role: "user", content: "anything else?" });
    const past = (await client.chat.completions.create({ model: "x", messages })) as Wire;
    assert.equal(past.choices[0].message.content, "done");
  });

  it("serves many conversations at once without mixing them up", async () => {
    const texts = Array.from({ length: 24 }, (_, i) => (i % 2 ? `hello task ${i}` : `other ${i}`));
    const bodies = (await Promise.all(
      texts.map((t) => client.chat.completions.create({ model: "x", messages: ask(t), tools })),
    )) as Wire[];
    bodies.forEach((body, i) => {
      if (i % 2) assert.equal(body.choices[0].message.tool_calls[0].function.name, "bash");
      else assert.equal(body.choices[0].message.content, "Hello wörld, from the scripted policy!");
    });
  });

  it("fails, hangs and sends malformed bodies as scripted", async () => {
    await assert.rejects(
      client.chat.completions.create({ model: "x", messages: ask("fail 503") }),
      (err: Wire) => {
        assert.ok(err instanceof OpenAI.APIError);
        assert.equal(err.status, 503);
        return true;
      },
    );
    const quick = client.withOptions({ timeout: 300 });
    await assert.rejects(
      quick.chat.completions.create({ model: "x", messages: ask("hang") }),
      OpenAI.APIConnectionTimeoutError,
    );
    await assert.rejects(client.chat.completions.create({ model: "x", messages: ask("malformed") }));
    const silent = client.withOptions({ logLevel: "off" });
    await assert.rejects(async () => {
      await collect(
        (await silent.chat.completions.create({
          model: "x",
          messages: ask("malformed"),
          stream: true,
        })) as Wire,
      );
    });
    const raw = await fetch(`${endpoint.baseUrl}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "x", messages: ask("malformed") }),
    });
    assert.equal(raw.status, 200);
    const text = await raw.text();
    assert.throws(() => JSON.parse(text));
  });

  it("answers unknown paths and bad requests with OpenAI-style errors", async () => {
    const res = await fetch(`${endpoint.baseUrl}/completions`, { method: "POST", body: "{}" });
    assert.equal(res.status, 404);
    const body = (await res.json()) as Wire;
    assert.equal(body.error.code, 404);
    assert.equal(typeof body.error.message, "string");
    await assert.rejects(
      client.chat.completions.create({ model: "x", messages: [] }),
      (err: Wire) => err.status === 400 && /messages/.test(err.message),
    );
    await assert.rejects(
      client.chat.completions.create({ model: "x", messages: ask("hi"), top_logprobs: 5 }),
      (err: Wire) => err.status === 400 && /logprobs/.test(err.message),
    );
  });

  it("lists the served model and records every request", async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ["policy-7b"],
    );
    const last = endpoint.requests.at(-1);
    assert.equal(last?.path, "/v1/models");
    assert.equal(last?.headers.authorization, "Bearer unused");
    assert.ok(endpoint.requests.some((r) => r.body?.messages?.[0]?.content === "fail 503"));
  });

  it("returns SGLang's sglext ids, streamed in a final choices-less chunk", async () => {
    const flags = {
      return_input_ids_in_sglext: true,
      return_output_ids_in_sglext: true,
      return_token_ids: true,
    };
    const body = (await client.chat.completions.create({
      model: "x",
      messages: ask("hi"),
      ...flags,
    } as Wire)) as Wire;
    assert.deepEqual(body.sglext, {
      input_ids: body.prompt_token_ids,
      output_ids: [body.choices[0].token_ids],
    });
    const chunks = await collect(
      (await client.chat.completions.create({
        model: "x",
        messages: ask("hi"),
        stream: true,
        ...flags,
      } as Wire)) as Wire,
    );
    const ext = chunks.find((c) => c.sglext);
    assert.deepEqual(ext.choices, []);
    assert.deepEqual(ext.sglext.output_ids, [body.choices[0].token_ids]);
  });
});

describe("scripted endpoint options", () => {
  it("requires the API key when one is set", async () => {
    const guarded = await startScriptedEndpoint({
      apiKey: "sk-test",
      script: { conversations: [{ replies: [] }] },
    });
    try {
      const wrong = new OpenAI({ baseURL: guarded.baseUrl, apiKey: "sk-wrong", maxRetries: 0 });
      await assert.rejects(wrong.models.list(), OpenAI.AuthenticationError);
      await assert.rejects(
        wrong.chat.completions.create({ model: "x", messages: ask("hi") }),
        OpenAI.AuthenticationError,
      );
      const right = new OpenAI({ baseURL: guarded.baseUrl, apiKey: "sk-test", maxRetries: 0 });
      const body = await right.chat.completions.create({ model: "x", messages: ask("hi") });
      assert.equal(body.choices[0]?.message.content, "done");
    } finally {
      await guarded.close();
    }
  });

  it("drops requests it is holding when closed", async () => {
    const holding = await startScriptedEndpoint({
      script: { conversations: [{ replies: [{ hang: true }] }] },
    });
    const c = new OpenAI({ baseURL: holding.baseUrl, apiKey: "k", maxRetries: 0, timeout: 30_000 });
    const pending = c.chat.completions.create({ model: "x", messages: ask("hi") });
    while (holding.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await holding.close();
    await assert.rejects(pending, OpenAI.APIConnectionError);
  });

  it("behaves like a server without token ids or logprobs when those are switched off", async () => {
    const plain = await startScriptedEndpoint({
      tokenIds: false,
      logprobs: false,
      recordRequests: false,
      script: { conversations: [{ replies: [{ content: "ok" }] }] },
    });
    try {
      const c = new OpenAI({ baseURL: plain.baseUrl, apiKey: "k", maxRetries: 0 });
      const body = (await c.chat.completions.create({
        model: "x",
        messages: ask("hi"),
        logprobs: true,
        return_token_ids: true,
      } as Wire)) as Wire;
      assert.equal(body.choices[0].logprobs, null);
      assert.ok(!("token_ids" in body.choices[0]) && !("prompt_token_ids" in body));
      assert.equal(plain.requests.length, 0);
    } finally {
      await plain.close();
    }
  });
});
