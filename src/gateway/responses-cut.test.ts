// A Responses stream whose endpoint cuts the answer short ends with response.failed, and the half
// answer is never handed over as a done item (agents such as Codex keep done items as the policy's
// turn, and would then "recover" from an endpoint failure with words the policy never finished).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Harness, recorded, startHarness } from "./testing/harness.js";

let h: Harness;

before(async () => {
  h = await startHarness({
    script: { conversations: [{ replies: [{ cut: true }, { content: "a long answer that is cut short" }] }] },
  });
});
after(() => h.close());

describe("gateway: a Responses stream cut short by the endpoint", () => {
  it("ends with response.failed and no done item, and is recorded as the endpoint's failure", async () => {
    const t = h.rollout("cut");
    const res = await fetch(`${h.gateway.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, input: "hello" }),
    });
    const text = await res.text();
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    assert.equal(types.at(-1), "response.failed", text);
    assert.ok(!types.includes("response.output_item.done"), `a done item was sent: ${types.join(", ")}`);
    assert.ok(!types.includes("response.completed"));
    const [line] = await recorded(h, "cut");
    assert.equal(line?.metadata && (line.metadata as Record<string, unknown>).fault, "endpoint");
  });
});
