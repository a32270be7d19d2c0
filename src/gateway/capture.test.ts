// Token capture: with capture on, every call of every dialect (streamed or not) records the prompt ids
// the policy saw, the sampled ids and their logprobs; what a server does not give is listed, with why.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { detokenize, promptTokenIds } from "../scripted-endpoint/chat-template.js";
import {
  type Harness,
  type HarnessGatewayOptions,
  type Loose,
  recorded,
  startHarness,
} from "./testing/harness.js";

const script = {
  conversations: [
    {
      replies: [
        {
          reasoning: "think",
          content: "Hello!",
          tool_calls: [{ name: "bash", arguments: { command: "ls" } }],
        },
        { content: "done" },
      ],
    },
  ],
};
const bash = {
  type: "function" as const,
  function: { name: "bash", parameters: { type: "object", properties: {} } },
};

/** One call in each dialect, plain and streamed: six calls. */
async function callEveryDialect(h: Harness, apiKey: string): Promise<void> {
  const openai = new OpenAI({ baseURL: `${h.gateway.url}/v1`, apiKey, maxRetries: 0 });
  const anthropic = new Anthropic({ baseURL: h.gateway.url, apiKey, maxRetries: 0 });
  const messages = [{ role: "user" as const, content: "hi" }];
  await openai.chat.completions.create({ model: "m", messages, tools: [bash] });
  await openai.chat.completions.stream({ model: "m", messages, tools: [bash] }).finalChatCompletion();
  await openai.responses.create({ model: "m", input: "hi" });
  await openai.responses.stream({ model: "m", input: "hi" }).finalResponse();
  await anthropic.messages.create({ model: "m", max_tokens: 9, messages });
  await anthropic.messages.stream({ model: "m", max_tokens: 9, messages }).finalMessage();
}

async function run(
  gateway: HarnessGatewayOptions,
  endpoint: Loose = {},
): Promise<{ lines: Loose[]; h: Harness }> {
  const h = await startHarness({ script, endpoint, gateway });
  const t = h.rollout("cap");
  await callEveryDialect(h, t.apiKey);
  const lines = (await recorded(h, "cap")) as Loose[];
  return { lines, h };
}

describe("gateway: token capture", () => {
  let vllm: { lines: Loose[]; h: Harness };
  before(async () => {
    vllm = await run({ capture: { enabled: true, topLogprobs: 2 } });
  });
  after(() => vllm.h.close());

  it("vllm: every call has prompt ids, sampled ids and logprobs, streamed or not", () => {
    assert.equal(vllm.lines.length, 6);
    for (const line of vllm.lines) {
      const tc = line.metadata.token_capture;
      const upstream = line.metadata.upstream_request.body;
      assert.equal(upstream.return_token_ids, true, "ids asked as a top-level field");
      assert.equal(upstream.logprobs, true);
      assert.deepEqual(tc.unavailable, {}, `${line.metadata.wire} stream=${line.metadata.stream}`);
      assert.deepEqual(tc.requested, { logprobs: true, top_logprobs: 2, token_ids: true });
      assert.equal(tc.wire, line.metadata.wire);
      // The prompt ids are those of the chat request the policy actually saw.
      assert.deepEqual(tc.prompt_token_ids, promptTokenIds(upstream.messages, upstream.tools));
      const [completion] = tc.completions;
      assert.ok(detokenize(completion.token_ids).includes("Hello!"));
      assert.equal(completion.logprobs.length, completion.token_ids.length);
      assert.equal(completion.tokens.length, completion.token_ids.length);
      assert.equal(completion.top_logprobs[0].length, 2);
      // Token ids are stored once: in the capture block, not in the recorded body.
      const body = JSON.stringify(line.response.body);
      assert.ok(!body.includes("token_ids") && !body.includes("sglext"));
    }
    assert.deepEqual(
      vllm.lines.map((l) => `${l.metadata.wire}:${l.metadata.stream}`),
      [
        "openai-chat:false",
        "openai-chat:true",
        "openai-responses:false",
        "openai-responses:true",
        "anthropic-messages:false",
        "anthropic-messages:true",
      ],
    );
  });

  it("a server that returns no ids: the capture says not_returned, logprobs still captured", async () => {
    const { lines, h } = await run({ capture: { enabled: true } }, { tokenIds: false });
    try {
      for (const line of lines) {
        const tc = line.metadata.token_capture;
        assert.equal(tc.unavailable.prompt_token_ids.reason, "not_returned");
        assert.equal(tc.unavailable.completion_token_ids.reason, "not_returned");
        assert.equal(tc.unavailable.logprobs, undefined);
        assert.ok(tc.completions[0].logprobs.length > 0);
      }
    } finally {
      await h.close();
    }
  });

  it("a server that returns no logprobs: the capture says so", async () => {
    const { lines, h } = await run({ capture: { enabled: true } }, { logprobs: false });
    try {
      for (const line of lines)
        assert.equal(line.metadata.token_capture.unavailable.logprobs.reason, "not_returned");
    } finally {
      await h.close();
    }
  });

  it("sglang: ids asked with the sglext flags and read from sglext, streamed or not", async () => {
    const { lines, h } = await run({ capture: { enabled: true }, upstream: { provider: "sglang" } });
    try {
      for (const line of lines) {
        const upstream = line.metadata.upstream_request.body;
        assert.equal(upstream.return_input_ids_in_sglext, true);
        assert.equal(upstream.return_output_ids_in_sglext, true);
        assert.equal(upstream.return_token_ids, undefined);
        const tc = line.metadata.token_capture;
        assert.deepEqual(tc.unavailable, {});
        assert.equal(tc.provider, "sglang");
        assert.deepEqual(tc.prompt_token_ids, promptTokenIds(upstream.messages, upstream.tools));
      }
    } finally {
      await h.close();
    }
  });

  it("openai provider (tokenIds auto): ids not requested, logprobs captured", async () => {
    const { lines, h } = await run({ capture: { enabled: true }, upstream: { provider: "openai" } });
    try {
      for (const line of lines) {
        assert.equal(line.metadata.upstream_request.body.return_token_ids, undefined);
        const tc = line.metadata.token_capture;
        assert.equal(tc.unavailable.prompt_token_ids.reason, "not_requested");
        assert.equal(tc.unavailable.completion_token_ids.reason, "not_requested");
        assert.equal(tc.requested.token_ids, false);
        assert.ok(tc.completions[0].logprobs.length > 0);
      }
    } finally {
      await h.close();
    }
  });

  it("capture off: nothing is added upstream and no capture block is written", async () => {
    const { lines, h } = await run({ capture: { enabled: false } });
    try {
      for (const line of lines) {
        assert.equal(line.metadata.token_capture, undefined);
        assert.equal(line.metadata.upstream_request.body.logprobs, undefined);
      }
    } finally {
      await h.close();
    }
  });

  it("an agent that asks for ids and logprobs itself gets them; the record keeps ids only in the capture", async () => {
    const t = vllm.h.rollout("asker");
    const openai = new OpenAI({ baseURL: `${vllm.h.gateway.url}/v1`, apiKey: t.apiKey, maxRetries: 0 });
    const answer = (await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      logprobs: true,
      return_token_ids: true,
    } as Loose)) as Loose;
    assert.ok(answer.prompt_token_ids.length > 0);
    assert.ok(answer.choices[0].token_ids.length > 0);
    // It asked for logprobs without alternatives: the gateway's top_logprobs are not passed back.
    assert.deepEqual(answer.choices[0].logprobs.content[0].top_logprobs, []);
    const [line] = (await recorded(vllm.h, "asker")) as Loose[];
    assert.equal(line.response.body.prompt_token_ids, undefined);
    assert.equal(line.response.body.choices[0].token_ids, undefined);
    assert.ok(line.response.body.choices[0].logprobs.content.length > 0);
    assert.deepEqual(line.metadata.token_capture.completions[0].token_ids, answer.choices[0].token_ids);
    assert.equal(line.metadata.token_capture.completions[0].top_logprobs[0].length, 2);
  });
});
