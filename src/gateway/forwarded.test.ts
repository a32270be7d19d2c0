// Only sampling an agent sends reaches the policy server: server-side knobs (n, best_of, logit_bias,
// guided decoding, ...) are dropped, named in the line and counted; the run's reasoning effort wins.
// The requests go out through the official clients (openai, @anthropic-ai/sdk), so the wire is theirs.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type Harness, type Loose, recorded, startHarness } from "./testing/harness.js";

const KNOBS = {
  n: 64,
  best_of: 64,
  logit_bias: { "1234": 100 },
  top_k: 1,
  ignore_eos: true,
  min_tokens: 4000,
  guided_json: { type: "object" },
  guided_regex: "a+",
  structured_outputs: { choice: ["yes"] },
  priority: -100,
  lora_request: { lora_name: "other" },
  prompt_logprobs: 20,
  presence_penalty: 2,
  chat_template_kwargs: { enable_thinking: false },
};

let h: Harness;
let effort: Harness;

const script = { conversations: [{ replies: [{ content: "ok" }, { content: "ok" }, { content: "ok" }] }] };

before(async () => {
  h = await startHarness({ script });
  effort = await startHarness({ script, gateway: { sampling: { reasoningEffort: "low" } } });
});
after(async () => {
  await h.close();
  await effort.close();
});

function openai(harness: Harness, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${harness.gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });
}

describe("gateway: what reaches the policy server", () => {
  it("chat: server-side knobs never reach it; the line names them and the rollout counts them", async () => {
    const t = h.rollout("knobs");
    const before = h.endpoint.requests.length;
    const answer = await openai(h, t.apiKey).chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hello" }],
      temperature: 0.7,
      reasoning_effort: "high",
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true } as Loose,
      ...(KNOBS as Loose),
    });
    for await (const _ of answer as Loose);
    const sent = h.endpoint.requests.slice(before);
    assert.equal(sent.length, 1, "one call upstream, not 64");
    const body = sent[0]?.body as Loose;
    for (const knob of Object.keys(KNOBS)) assert.equal(body[knob], undefined, `${knob} reached the server`);
    assert.deepEqual(body.stream_options, { include_usage: true });
    // What agents do send passes.
    assert.equal(body.temperature, 0.7);
    assert.equal(body.reasoning_effort, "high");
    assert.deepEqual(body.messages, [{ role: "user", content: "hello" }]);
    const usage = h.gateway.usage("knobs");
    const [line] = (await recorded(h, "knobs")) as Loose[];
    const dropped = [...Object.keys(KNOBS), "stream_options.continuous_usage_stats"].sort();
    assert.deepEqual([...line.metadata.dropped_fields].sort(), dropped);
    // The line records what was sent, and the agent's request as it came.
    for (const knob of Object.keys(KNOBS)) assert.equal(line.metadata.upstream_request.body[knob], undefined);
    assert.equal(line.request.body.n, 64);
    assert.deepEqual(Object.keys(usage.droppedFields).sort(), dropped);
    assert.equal(usage.droppedFields.n, 1);
  });

  it("chat: n of 1 and a plain request drop nothing", async () => {
    const t = h.rollout("plain");
    await openai(h, t.apiKey).chat.completions.create({
      model: "m",
      n: 1,
      user: "me",
      messages: [{ role: "user", content: "hello" }],
    });
    const [line] = (await recorded(h, "plain")) as Loose[];
    assert.equal(line.metadata.dropped_fields, undefined);
    assert.deepEqual(h.gateway.usage("plain").droppedFields, {});
  });

  it("Anthropic Messages: top_k and unknown fields are dropped; the conversation goes through", async () => {
    const t = h.rollout("anthropic");
    const before = h.endpoint.requests.length;
    const client = new Anthropic({ baseURL: h.gateway.url, apiKey: t.apiKey, maxRetries: 0 });
    await client.messages.create({
      model: "claude",
      max_tokens: 100,
      top_k: 1,
      messages: [{ role: "user", content: "hello" }],
      ...({ ignore_eos: true } as Loose),
    });
    const body = h.endpoint.requests.slice(before)[0]?.body as Loose;
    assert.equal(body.top_k, undefined);
    assert.equal(body.ignore_eos, undefined);
    assert.equal(body.max_tokens, 100);
    const [line] = (await recorded(h, "anthropic")) as Loose[];
    assert.deepEqual([...line.metadata.dropped_fields].sort(), ["ignore_eos", "top_k"]);
  });

  it("Responses: fields outside its allowlist are dropped", async () => {
    const t = h.rollout("responses");
    const before = h.endpoint.requests.length;
    await openai(h, t.apiKey).responses.create({
      model: "m",
      input: "hello",
      top_logprobs: 5,
      ...({ logit_bias: { "1": 5 } } as Loose),
    });
    const body = h.endpoint.requests.slice(before)[0]?.body as Loose;
    assert.equal(body.logit_bias, undefined);
    const [line] = (await recorded(h, "responses")) as Loose[];
    assert.deepEqual([...line.metadata.dropped_fields].sort(), ["logit_bias", "top_logprobs"]);
  });

  it("the run's reasoning effort is sent on every call, over the agent's own", async () => {
    const t = effort.rollout("effort");
    const before = effort.endpoint.requests.length;
    const client = openai(effort, t.apiKey);
    await client.chat.completions.create({
      model: "m",
      reasoning_effort: "high",
      messages: [{ role: "user", content: "a" }],
    });
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "b" }] });
    const sent = effort.endpoint.requests.slice(before).map((r) => (r.body as Loose).reasoning_effort);
    assert.deepEqual(sent, ["low", "low"]);
    const lines = (await recorded(effort, "effort")) as Loose[];
    assert.deepEqual(
      lines.map((l) => l.metadata.sampling.reasoning_effort),
      ["low", "low"],
    );
  });
});
