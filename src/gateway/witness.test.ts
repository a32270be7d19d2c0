// The gateway as witness: each call's verdict (whose fault a failure is), its own retries of 429/503,
// and the rollout it ends at once when the endpoint keeps failing or refuses the configuration.
// The upstream here is a bare node:http server whose answers the test scripts call by call.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { nameFlags } from "../cli/option-flags.js";
import { type Gateway, startGateway } from "./index.js";

type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

const OK = JSON.stringify({
  id: "c1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** Answers per scenario (the user message), consumed in order; the last one repeats. */
const scripts = new Map<string, Answer[]>();
const hits = new Map<string, number>();
/** Called when the upstream holds a request scripted to hang. */
let onHang: () => void = () => {};
let upstream: http.Server;
let gateway: Gateway;
let dir: string;

before(async () => {
  // The fixes the witness gives name the flags, as they do when the bench command runs.
  nameFlags();
  upstream = http.createServer((req, res) => {
    let text = "";
    req.on("data", (part) => (text += part));
    req.on("end", () => {
      const scenario = String(JSON.parse(text).messages?.[0]?.content ?? "");
      const n = hits.get(scenario) ?? 0;
      hits.set(scenario, n + 1);
      const list = scripts.get(scenario) ?? [{ status: 200, body: OK }];
      const answer = list[Math.min(n, list.length - 1)] as Answer;
      if (answer === "hang") return onHang();
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(answer.body ?? JSON.stringify({ error: { message: `scripted ${answer.status}` } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  gateway = await startGateway({
    upstream: { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: null, model: "m", provider: "vllm" },
    sampling: {},
    capture: { enabled: false },
    endpoint: { firstByteTimeoutSec: 0.5, failFastCalls: 3, retries: 2 },
  });
  dir = await mkdtemp(path.join(tmpdir(), "bf-witness-"));
});

after(async () => {
  await gateway.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function rollout(name: string, answers: Answer[]) {
  scripts.set(name, answers);
  const added = gateway.addRollout(name, { trajectoryFile: path.join(dir, `${name}.jsonl`) });
  const ask = async (signal?: AbortSignal) => {
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${added.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: name }] }),
      ...(signal ? { signal } : {}),
    });
    return { status: res.status, text: await res.text() };
  };
  return { ...added, ask };
}

async function lines(name: string): Promise<Record<string, any>[]> {
  await gateway.removeRollout(name);
  const text = await readFile(path.join(dir, `${name}.jsonl`), "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("gateway: the witness of a rollout's calls", () => {
  it("ends the rollout as provider_error on the third endpoint failure in a row, not before", async () => {
    const t = rollout("five-hundreds", [{ status: 500 }]);
    for (let i = 1; i <= 2; i++) {
      assert.equal((await t.ask()).status, 500);
      assert.equal(t.ended.aborted, false, `not ended after ${i} failure(s)`);
    }
    assert.equal((await t.ask()).status, 500);
    assert.equal(t.ended.aborted, true);
    const w = gateway.witness("five-hundreds");
    assert.equal(w.endedBy?.category, "provider_error");
    assert.match(
      w.endedBy?.message ?? "",
      /3 model call\(s\) in a row failed at the endpoint; the last: .*answered 500: scripted 500/,
    );
    assert.deepEqual([w.calls, w.failedCalls, w.consecutiveEndpointFailures], [3, 3, 3]);
    assert.equal(w.last?.fault, "endpoint");
    const recorded = await lines("five-hundreds");
    assert.deepEqual(
      recorded.map((l) => l.metadata.fault),
      ["endpoint", "endpoint", "endpoint"],
    );
  });

  it("a recovery resets the streak: two failures then a success leave the rollout running", async () => {
    const t = rollout("recovers", [
      { status: 502 },
      { status: 500 },
      { status: 200, body: OK },
      { status: 500 },
    ]);
    assert.deepEqual(
      [(await t.ask()).status, (await t.ask()).status, (await t.ask()).status, (await t.ask()).status],
      [502, 500, 200, 500],
    );
    const w = gateway.witness("recovers");
    assert.equal(t.ended.aborted, false);
    assert.deepEqual([w.calls, w.failedCalls, w.consecutiveEndpointFailures], [4, 3, 1]);
  });

  it("a 200 whose body is not JSON and an endpoint that sends no first byte are endpoint failures", async () => {
    const t = rollout("garbage", [{ status: 200, body: "<html>oops</html>" }, "hang"]);
    const garbage = await t.ask();
    assert.equal(garbage.status, 502);
    assert.match(garbage.text, /malformed JSON/);
    assert.equal(gateway.witness("garbage").last?.fault, "endpoint");
    const silent = await t.ask();
    assert.equal(silent.status, 504);
    assert.match(silent.text, /no first byte within 0.5 s/);
    assert.equal(gateway.witness("garbage").consecutiveEndpointFailures, 2);
  });

  it("401 and 404 are the user's configuration: the rollout ends at once with the fix", async () => {
    const key = rollout("bad-key", [{ status: 401 }]);
    assert.equal((await key.ask()).status, 401);
    assert.equal(key.ended.aborted, true);
    const w = gateway.witness("bad-key");
    assert.equal(w.endedBy?.category, "config_error");
    assert.match(w.endedBy?.message ?? "", /refuses the key: pass the key it expects with --api-key/);
    const model = rollout("no-model", [
      { status: 404, body: '{"error":{"message":"model m does not exist"}}' },
    ]);
    assert.equal((await model.ask()).status, 404);
    assert.match(gateway.witness("no-model").endedBy?.message ?? "", /does not exist.*-m provider\/model/);
  });

  it("a 400 is the policy's own request refused: a verdict against the policy, never an end", async () => {
    const t = rollout("too-long", [{ status: 400, body: '{"error":{"message":"context length exceeded"}}' }]);
    for (let i = 0; i < 4; i++) assert.equal((await t.ask()).status, 400);
    const w = gateway.witness("too-long");
    assert.equal(t.ended.aborted, false);
    assert.equal(w.last?.fault, "policy");
    assert.equal(w.consecutiveEndpointFailures, 0);
  });

  it("retries a 503 and a 429 itself (Retry-After honoured), so the agent sees the recovery", async () => {
    const t = rollout("busy", [
      { status: 503 },
      { status: 429, headers: { "retry-after": "0" } },
      { status: 200, body: OK },
    ]);
    assert.equal((await t.ask()).status, 200);
    assert.equal(hits.get("busy"), 3);
    const w = gateway.witness("busy");
    assert.deepEqual([w.calls, w.failedCalls, w.last?.fault], [1, 0, null]);
    const [line] = await lines("busy");
    assert.equal(line?.metadata.upstream_attempts, 3);
  });

  it("gives up after its retries, and does not wait out a Retry-After past its cap", async () => {
    const t = rollout("always-busy", [{ status: 503 }]);
    assert.equal((await t.ask()).status, 503);
    assert.equal(hits.get("always-busy"), 3, "one try and two retries");
    assert.equal(gateway.witness("always-busy").last?.fault, "endpoint");
    const later = rollout("come-back-later", [{ status: 429, headers: { "retry-after": "3600" } }]);
    assert.equal((await later.ask()).status, 429);
    assert.equal(hits.get("come-back-later"), 1);
  });

  it("a call the agent hangs up on is no verdict: the last verdict stays the earlier one", async () => {
    const t = rollout("hang-up", [{ status: 200, body: OK }, "hang"]);
    assert.equal((await t.ask()).status, 200);
    const agent = new AbortController();
    // The agent hangs up once the call is upstream: sooner, the gateway might record no call at all.
    const held = new Promise<void>((resolve) => (onHang = resolve));
    const call = t.ask(agent.signal);
    await held;
    agent.abort();
    await assert.rejects(call, { name: "AbortError" });
    const [first, second] = await lines("hang-up");
    assert.equal(first?.response.status_code, 200);
    assert.equal(second?.metadata.fault, "agent");
    const w = gateway.witness("hang-up");
    assert.equal(w.last?.fault, null);
    assert.equal(w.consecutiveEndpointFailures, 0);
  });
});
