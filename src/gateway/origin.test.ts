// Who made a call: a connection that opens with a line signed with the gateway's origin key carries
// that origin into each call's line and the rollout's counts; a line without the key closes the
// connection unserved; a connection without a line is unattributed. Real sockets, real files.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { type CallOrigin, originLine } from "./origin.js";
import { type Harness, type Loose, recorded, startHarness } from "./testing/harness.js";

let h: Harness;

before(async () => {
  h = await startHarness({
    script: { conversations: [{ replies: Array.from({ length: 8 }, () => ({ content: "ok" })) }] },
  });
});
after(() => h.close());

/** One chat call on a raw socket, `first` written ahead of it (split in two writes, as a relay may). */
function call(apiKey: string, first: string): Promise<{ status: number | null; closed: boolean }> {
  const { port } = new URL(h.gateway.url);
  const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
  const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
  return new Promise((resolve) => {
    const s = net.connect(Number(port), "127.0.0.1");
    let got = "";
    s.on("data", (d) => {
      got += d;
    });
    s.on("error", () => {});
    s.on("close", () => {
      const m = /^HTTP\/1\.1 (\d+)/.exec(got);
      resolve({ status: m ? Number(m[1]) : null, closed: true });
    });
    const half = Math.floor(first.length / 2);
    s.write(first.slice(0, half));
    setTimeout(() => s.write(first.slice(half) + request), 20);
  });
}

describe("gateway: the origin of a call", () => {
  it("a signed line's origin is on the call's line and in the rollout's counts; none is unattributed", async () => {
    const t = h.rollout("signed");
    const other: CallOrigin = { kind: "other", pid: 77, comm: "curl", why: "not the agent's process" };
    assert.equal((await call(t.apiKey, originLine(h.gateway.originKey, other))).status, 200);
    assert.equal(
      (await call(t.apiKey, originLine(h.gateway.originKey, { kind: "agent", pid: 5 }))).status,
      200,
    );
    assert.equal((await call(t.apiKey, "")).status, 200);
    assert.deepEqual(h.gateway.usage("signed").callsByOrigin, { other: 1, agent: 1, unattributed: 1 });
    const lines = (await recorded(h, "signed")) as Loose[];
    assert.deepEqual(
      lines.map((l) => l.metadata.origin),
      [other, { kind: "agent", pid: 5 }, { kind: "unattributed" }],
    );
  });

  it("a line not signed with the gateway's key closes the connection: nothing is served or recorded", async () => {
    const t = h.rollout("forged");
    const sent = h.endpoint.requests.length;
    const forged = originLine("not-the-key", { kind: "agent", pid: 1 });
    const r = await call(t.apiKey, forged);
    assert.equal(r.status, null, "no answer");
    assert.equal(h.endpoint.requests.length, sent);
    assert.deepEqual(await recorded(h, "forged"), []);
  });
});
