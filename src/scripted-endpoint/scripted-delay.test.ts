// delayMs: the scripted endpoint holds each chat answer back, as a GPU decoding would.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ScriptedEndpoint, startScriptedEndpoint } from "./scripted-server.js";

const DELAY_MS = 150;
/** The order test's delay: far longer than a /models round trip, however slow the machine. */
const LONG_DELAY_MS = 2_000;
let endpoint: ScriptedEndpoint;
let patient: ScriptedEndpoint;

before(async () => {
  const options = { recordRequests: false, script: { conversations: [{ replies: [{ content: "later" }] }] } };
  endpoint = await startScriptedEndpoint({ ...options, delayMs: DELAY_MS });
  patient = await startScriptedEndpoint({ ...options, delayMs: LONG_DELAY_MS });
});
after(async () => {
  await endpoint.close();
  await patient.close();
});

async function timed(init: RequestInit, route = "/chat/completions", on = endpoint) {
  const t0 = performance.now();
  const res = await fetch(`${on.baseUrl}${route}`, init);
  const text = await res.text();
  return { ms: performance.now() - t0, status: res.status, text };
}

const chat = (stream: boolean): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "hi" }] }),
});

describe("scripted endpoint delayMs", () => {
  it("answers chat completions, streamed or not, no sooner than the delay, and otherwise unchanged", async () => {
    const plain = await timed(chat(false));
    assert.equal(plain.status, 200);
    assert.equal(JSON.parse(plain.text).choices[0].message.content, "later");
    assert.ok(plain.ms >= DELAY_MS - 2, `answered after ${plain.ms} ms`);
    const streamed = await timed(chat(true));
    assert.equal(streamed.status, 200);
    assert.match(streamed.text, /data: \[DONE\]/);
    assert.ok(streamed.ms >= DELAY_MS - 2, `streamed after ${streamed.ms} ms`);
  });

  it("does not hold back other endpoints: /models sent after a chat call answers before it", async () => {
    const order: string[] = [];
    const slow = timed(chat(false), "/chat/completions", patient).then(() => order.push("chat"));
    const fast = timed({ method: "GET" }, "/models", patient).then((r) => {
      order.push("models");
      assert.equal(JSON.parse(r.text).object, "list");
    });
    await Promise.all([slow, fast]);
    assert.deepEqual(order, ["models", "chat"]);
  });
});
