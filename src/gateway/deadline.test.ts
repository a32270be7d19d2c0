// The upstream deadline counts idle time (no byte from the policy), not the length of a call; an agent
// that hangs up stops the upstream call and is recorded as 499, not counted as a policy failure.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { type Gateway, startGateway } from "./index.js";

let policy: http.Server;
let gateway: Gateway;
let dir: string;
/** Resolves when the policy sees the gateway drop the connection of a `hang` request. */
let hangClosed: Promise<void>;
let hangSeen: () => void;
/** Resolves when a `hang` request has reached the policy. */
let hangArrived: Promise<void>;
let hangHeld: () => void;

const chunk = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  })}\n\n`;

// A policy that streams slowly (`slow`), stops after one chunk (`stall`) or never answers (`hang`).
function answer(res: http.ServerResponse, body: string): void {
  const mode = /"content":"(\w+)"/.exec(body)?.[1];
  if (mode === "hang") {
    res.on("close", () => hangSeen());
    hangHeld();
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(chunk("0"));
  if (mode === "stall") return;
  let sent = 1;
  const timer = setInterval(() => {
    if (sent < 8) res.write(chunk(String(sent++)));
    else {
      clearInterval(timer);
      res.end(`${chunk("", "stop")}data: [DONE]\n\n`);
    }
  }, 150);
  res.on("close", () => clearInterval(timer));
}

before(async () => {
  hangClosed = new Promise((resolve) => (hangSeen = resolve));
  hangArrived = new Promise((resolve) => (hangHeld = resolve));
  policy = http.createServer((req, res) => {
    let body = "";
    req.on("data", (part) => (body += part));
    req.on("end", () => answer(res, body));
  });
  await new Promise<void>((resolve) => policy.listen(0, "127.0.0.1", resolve));
  const { port } = policy.address() as AddressInfo;
  gateway = await startGateway({
    upstream: { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: null, model: "m", provider: "vllm" },
    sampling: {},
    capture: { enabled: false },
    upstreamTimeoutSec: 1,
  });
  dir = await mkdtemp(path.join(tmpdir(), "bf-deadline-"));
});

after(async () => {
  await gateway.close();
  policy.closeAllConnections();
  await new Promise((resolve) => policy.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function ask(apiKey: string, content: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content }] }),
    ...(signal ? { signal } : {}),
  });
}

describe("gateway: upstream deadline and agent hang-ups", () => {
  it("lets a stream run past the deadline while bytes keep coming, and fails one that goes quiet", async () => {
    const file = path.join(dir, "deadline.jsonl");
    const { apiKey } = gateway.addRollout("deadline", { trajectoryFile: file });
    const slow = await (await ask(apiKey, "slow")).text();
    assert.match(slow, /data: \[DONE\]/);
    assert.doesNotMatch(slow, /error/);
    const stalled = await (await ask(apiKey, "stall")).text();
    assert.match(stalled, /went silent mid-answer for 1 s \(idle limit/);
    await gateway.removeRollout("deadline");
    const lines = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.response.status_code),
      [200, 504],
    );
    assert.equal(lines[0].response.body.choices[0].message.content, "01234567");
    assert.equal(lines[1].response.body.choices[0].message.content, "0");
    assert.equal(gateway.usage("deadline").failedCalls, 1);
  });

  it("drops the upstream call when the agent hangs up, and records 499 without counting a failure", async () => {
    const file = path.join(dir, "hangup.jsonl");
    const { apiKey } = gateway.addRollout("hangup", { trajectoryFile: file });
    const agent = new AbortController();
    const call = ask(apiKey, "hang", agent.signal);
    // The agent hangs up once the call is upstream: sooner, the policy would never see it.
    await hangArrived;
    agent.abort();
    await assert.rejects(call, { name: "AbortError" });
    await hangClosed;
    await gateway.removeRollout("hangup");
    const [line] = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(line.response.status_code, 499);
    assert.match(line.metadata.error, /agent closed the connection/);
    const usage = gateway.usage("hangup");
    assert.equal(usage.calls, 1);
    assert.equal(usage.failedCalls, 0);
  });
});
