// A rollout's share of the host: a request over the per-call cap, an answer over it, and calls past
// the rollout's recorded-bytes cap are refused with a clear error, counted, and not recorded whole;
// a connection that sends nothing is closed by the gateway itself. Real HTTP, real files.
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { type Harness, type Loose, recorded, startHarness } from "./testing/harness.js";

const KIB = 1024;
let h: Harness;
let answers: Harness;

const many = Array.from({ length: 40 }, () => ({ content: "ok" }));

before(async () => {
  h = await startHarness({
    script: { conversations: [{ replies: many }] },
    gateway: { bounds: { callBytes: 256 * KIB, recordedBytes: 1024 * KIB } },
  });
  answers = await startHarness({
    script: { conversations: [{ replies: [{ content: "x".repeat(200 * KIB) }] }] },
    gateway: { bounds: { callBytes: 64 * KIB } },
  });
});
after(async () => {
  await h.close();
  await answers.close();
});

function client(harness: Harness, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${harness.gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });
}

async function failure(p: Promise<unknown>): Promise<Loose> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail("the call should have been refused");
}

describe("gateway: bounds per call and per rollout", () => {
  it("a request over the per-call cap is refused (413), never sent, and its body is not recorded", async () => {
    const t = h.rollout("big-request");
    const sentBefore = h.endpoint.requests.length;
    const err = await failure(
      client(h, t.apiKey).chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "y".repeat(300 * KIB) }],
      }),
    );
    assert.equal(err.status, 413);
    assert.match(err.message, /per-call cap of 0\.25 MiB \(policy\.maxCallMib\)/);
    assert.equal(h.endpoint.requests.length, sentBefore, "the policy server never saw it");
    const usage = h.gateway.usage("big-request");
    assert.deepEqual(usage.refusedCalls, { request: 1 });
    const [line] = (await recorded(h, "big-request")) as Loose[];
    assert.equal(line.metadata.refused, "request");
    assert.equal(line.request.body, null);
    assert.ok((await stat(t.file)).size < 16 * KIB, "the refused body is not in the file");
  });

  it("past the rollout's recorded cap every call is refused unsent, and the file stays under the cap plus one call", async () => {
    const t = h.rollout("flood");
    const api = client(h, t.apiKey);
    const body = "z".repeat(200 * KIB);
    let ok = 0;
    let refused: Loose = null;
    for (let i = 0; i < 10 && refused === null; i++) {
      try {
        await api.chat.completions.create({ model: "m", messages: [{ role: "user", content: body }] });
        ok++;
      } catch (err) {
        refused = err;
      }
    }
    assert.ok(ok >= 2 && ok <= 5, `some calls fit under the cap first (${ok})`);
    assert.equal(refused?.status, 413);
    assert.match(refused.message, /recorded model calls reached the gateway's cap of 1 MiB per rollout/);
    const sent = h.endpoint.requests.length;
    await failure(
      api.chat.completions.create({ model: "m", messages: [{ role: "user", content: "small" }] }),
    );
    assert.equal(h.endpoint.requests.length, sent, "refused calls never reach the policy server");
    assert.deepEqual(h.gateway.usage("flood").refusedCalls, { recorded: 2 });
    const lines = (await recorded(h, "flood")) as Loose[];
    assert.equal(lines.filter((l) => l.metadata.refused === "recorded").length, 2);
    const size = (await stat(t.file)).size;
    assert.ok(size <= 1024 * KIB + 256 * KIB, `the trajectory stays near the cap (${size} bytes)`);
  });

  it("an answer over the per-call cap fails the call at the endpoint's door, counted", async () => {
    const t = answers.rollout("big-answer");
    const err = await failure(
      client(answers, t.apiKey).chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "a" }],
      }),
    );
    assert.equal(err.status, 502);
    assert.match(err.message, /answer over the gateway's per-call cap of 0\.0625 MiB/);
    assert.deepEqual(answers.gateway.usage("big-answer").refusedCalls, { answer: 1 });
  });

  it("a connection that sends nothing is closed by the gateway, without a key", async () => {
    const { port } = new URL(h.gateway.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    const closed = await new Promise<boolean>((resolve) => {
      const guard = setTimeout(() => resolve(false), 120_000);
      socket.on("close", () => {
        clearTimeout(guard);
        resolve(true);
      });
      socket.on("error", () => {});
    });
    assert.ok(closed, "the gateway closed a connection that never sent its headers");
  });
});
