// Failed calls: bad credentials are refused and written nowhere; policy failures (down, 5xx, hang,
// malformed) reach the agent as clear errors in its own dialect and are recorded and counted.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startGateway } from "./index.js";
import { type Harness, type Loose, recorded, startHarness, UPSTREAM_KEY } from "./testing/harness.js";

let h: Harness;

before(async () => {
  h = await startHarness({
    gateway: { upstreamTimeoutSec: 0.5 },
    script: {
      conversations: [
        {
          match: "fail-500",
          replies: [{ fail: { status: 500, body: '{"error":{"message":"engine crashed"}}' } }],
        },
        { match: "hang", replies: [{ hang: true }] },
        { match: "malformed", replies: [{ malformed: true }] },
        { replies: [{ content: "fine" }] },
      ],
    },
  });
});
after(() => h.close());

const openai = (apiKey: string, baseURL = `${h.gateway.url}/v1`) =>
  new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 10_000 });
const anthropic = (apiKey: string) =>
  new Anthropic({ baseURL: h.gateway.url, apiKey, maxRetries: 0, timeout: 10_000 });

async function allRecordedText(dir: string): Promise<string> {
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".jsonl"));
  const texts = await Promise.all(files.map((f) => readFile(path.join(dir, f), "utf8")));
  return texts.join("");
}

describe("gateway: credentials", () => {
  it("answers 401 in each dialect for a missing or unknown credential, and writes nothing", async () => {
    const mine = h.rollout("auth-mine");
    const other = h.rollout("auth-other");
    await h.gateway.removeRollout("auth-other");
    const before = h.endpoint.requests.length;
    await assert.rejects(
      openai("not-a-key").chat.completions.create({ model: "m", messages: [] }),
      (e: Loose) => {
        return e.status === 401 && e.error?.code === "invalid_api_key";
      },
    );
    await assert.rejects(openai(other.apiKey).responses.create({ model: "m", input: "x" }), { status: 401 });
    await assert.rejects(
      anthropic(other.apiKey).messages.create({
        model: "m",
        max_tokens: 5,
        messages: [{ role: "user", content: "x" }],
      }),
      (e: Loose) => e.status === 401 && e.error?.error?.type === "authentication_error",
    );
    const bare = await fetch(`${h.gateway.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    assert.equal(bare.status, 401);
    assert.match(((await bare.json()) as Loose).error.message, /missing credential/);
    assert.equal(h.endpoint.requests.length, before, "nothing reached the policy");
    assert.deepEqual(await recorded(h, "auth-mine"), []);
    assert.equal(h.gateway.usage("auth-other").calls, 0);
    void mine;
  });
});

describe("gateway: policy failures", () => {
  const cases = [
    { match: "fail-500", status: 500, message: /policy server answered 500: engine crashed/ },
    { match: "hang", status: 504, message: /sent no first byte within 0.5 s/ },
    { match: "malformed", status: 502, message: /malformed/ },
  ];
  for (const c of cases) {
    it(`${c.match}: the agent gets ${c.status} with a clear message, streamed or not, and it is recorded`, async () => {
      const name = `fail-${c.match}`;
      const t = h.rollout(name);
      const messages = [{ role: "user" as const, content: `please ${c.match}` }];
      await assert.rejects(openai(t.apiKey).chat.completions.create({ model: "m", messages }), (e: Loose) => {
        return e.status === c.status && c.message.test(e.message);
      });
      // Streamed: a failure before any chunk is an HTTP error; after the first chunk, an error event.
      await assert.rejects(async () => {
        const stream = await openai(t.apiKey).chat.completions.create({ model: "m", messages, stream: true });
        for await (const _ of stream) {
          // drain
        }
      }, c.message);
      await assert.rejects(
        anthropic(t.apiKey).messages.create({ model: "m", max_tokens: 5, messages }),
        (e: Loose) => e.status === c.status && c.message.test(e.message),
      );
      await assert.rejects(async () => {
        const stream = anthropic(t.apiKey).messages.stream({ model: "m", max_tokens: 5, messages });
        await stream.finalMessage();
      }, c.message);
      const usage = h.gateway.usage(name);
      assert.equal(usage.calls, 4);
      assert.equal(usage.failedCalls, 4);
      assert.match(usage.lastError ?? "", c.message);
      const lines = (await recorded(h, name)) as Loose[];
      assert.equal(lines.length, 4);
      for (const line of lines) {
        assert.equal(line.response.status_code, c.status);
        assert.ok(line.response.body.error, "the recorded body carries the error");
        assert.match(line.metadata.error, c.message);
      }
    });
  }

  it("upstream down: 502 naming the policy address, counted as a failed call", async () => {
    const down = await startGateway({
      upstream: { baseUrl: "http://127.0.0.1:9/v1", apiKey: UPSTREAM_KEY, model: "m", provider: "vllm" },
      sampling: {},
      capture: { enabled: true },
    });
    try {
      const file = path.join(h.dir, "down", "llm_trajectory.jsonl");
      const { apiKey } = down.addRollout("down", { trajectoryFile: file });
      await assert.rejects(
        openai(apiKey, `${down.url}/v1`).chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "x" }],
        }),
        (e: Loose) =>
          e.status === 502 &&
          /the endpoint http:\/\/127\.0\.0\.1:9\/v1 never answered: connection refused/.test(e.message),
      );
      assert.equal(down.usage("down").failedCalls, 1);
      await down.removeRollout("down");
      const [line] = (await readFile(file, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.equal(line.response.status_code, 502);
      assert.equal(line.metadata.upstream_status, null);
      assert.equal(line.metadata.token_capture.unavailable.logprobs.reason, "request_failed");
    } finally {
      await down.close();
    }
  });

  it("never writes the upstream key into any trajectory file", async () => {
    const text = await allRecordedText(h.dir);
    assert.ok(text.length > 0);
    assert.ok(!text.includes(UPSTREAM_KEY));
    assert.ok(h.endpoint.requests.every((r) => r.headers.authorization === `Bearer ${UPSTREAM_KEY}`));
  });
});
