// Scripted outages over real HTTP: transient failures (`times`) that give way to the turn's answer,
// and answers the endpoint cuts short (`cut`).
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { type ScriptedEndpoint, startScriptedEndpoint } from "./scripted-server.js";

type Wire = any;

let endpoint: ScriptedEndpoint;
let client: OpenAI;

before(async () => {
  endpoint = await startScriptedEndpoint({
    script: {
      conversations: [
        {
          match: "flaky",
          replies: [
            { fail: { status: 500 }, times: 2 },
            { content: "recovered" },
            { fail: { status: 503, body: "busy" }, times: 1 },
            { content: "second turn" },
          ],
        },
        { match: "slow start", replies: [{ hang: true, times: 1 }, { content: "answered" }] },
        {
          match: "cut tool",
          replies: [
            { cut: true, times: 1 },
            {
              tool_calls: [{ name: "bash", arguments: { command: "echo 'Hello, world!' > /app/hello.txt" } }],
            },
          ],
        },
        { match: "broken stream", replies: [{ cut: true }, { content: "unreachable" }] },
        {
          match: "cut once",
          replies: [
            { cut: true, times: 1 },
            { content: "A long enough answer to be streamed in several chunks, then finished." },
          ],
        },
      ],
    },
  });
  client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: "unused", maxRetries: 0 });
});
after(() => endpoint.close());

const ask = (text: string, assistants = 0): Wire[] => [
  { role: "user", content: text },
  ...Array.from({ length: assistants }, () => ({ role: "assistant", content: "ok" })),
];

/** POSTs a chat request and reads what arrives, noting whether the response ended properly. */
function post(
  body: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; complete: boolean }> {
  const url = new URL(`${endpoint.baseUrl}/chat/completions`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        let settled = false;
        const done = (complete: boolean) => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, complete });
        };
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => done(res.complete));
        res.on("aborted", () => done(false));
        res.on("error", () => done(false));
        res.on("close", () => done(res.complete));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("scripted outages: times", () => {
  it("fails the first N requests of a turn, then answers it; the next turn counts its own", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        client.chat.completions.create({ model: "x", messages: ask("flaky") }),
        (err: Wire) => {
          statuses.push(err.status);
          return err instanceof OpenAI.InternalServerError;
        },
      );
    }
    assert.deepEqual(statuses, [500, 500]);
    const ok = await client.chat.completions.create({ model: "x", messages: ask("flaky") });
    assert.equal(ok.choices[0]?.message.content, "recovered");
    // Once used up, the failure stays used up for that turn.
    const again = await client.chat.completions.create({ model: "x", messages: ask("flaky") });
    assert.equal(again.choices[0]?.message.content, "recovered");
    const busy = await post({ model: "x", messages: ask("flaky", 1) });
    assert.equal(busy.status, 503);
    assert.equal(busy.text, "busy");
    const second = await client.chat.completions.create({ model: "x", messages: ask("flaky", 1) });
    assert.equal(second.choices[0]?.message.content, "second turn");
  });

  it("counts each conversation (its opening user messages) apart", async () => {
    // "flaky, again" matches the same scripted conversation with another first message: a fresh count.
    for (let i = 0; i < 2; i++) {
      await assert.rejects(client.chat.completions.create({ model: "x", messages: ask("flaky, again") }));
    }
    const ok = await client.chat.completions.create({ model: "x", messages: ask("flaky, again") });
    assert.equal(ok.choices[0]?.message.content, "recovered");
  });

  it("holds the first request of a turn scripted to hang once, and answers the retry", async () => {
    // Long enough for the request to be at the server, however slow the machine, before it gives up.
    const quick = client.withOptions({ timeout: 2_000 });
    await assert.rejects(
      quick.chat.completions.create({ model: "x", messages: ask("slow start") }),
      OpenAI.APIConnectionTimeoutError,
    );
    const ok = await client.chat.completions.create({ model: "x", messages: ask("slow start") });
    assert.equal(ok.choices[0]?.message.content, "answered");
  });
});

describe("scripted outages: cut", () => {
  it("streams the first chunks of the turn's answer, then drops the connection without [DONE]", async () => {
    const got = await post({ model: "x", messages: ask("cut once"), stream: true });
    assert.equal(got.status, 200);
    assert.match(String(got.headers["content-type"]), /text\/event-stream/);
    assert.equal(got.complete, false, "the response never ended properly");
    const events = got.text.split("\n\n").filter((e) => e.startsWith("data: "));
    assert.ok(events.length >= 2, got.text);
    assert.ok(!got.text.includes("[DONE]"));
    const chunks = events.map((e) => JSON.parse(e.slice("data: ".length)));
    assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    const full = "A long enough answer to be streamed in several chunks, then finished.";
    assert.ok(text.length > 0 && full.startsWith(text) && text !== full, text);
    assert.ok(chunks.every((c) => c.choices[0]?.finish_reason === null));
    // times: 1, so the retry gets the whole answer.
    const retry = await client.chat.completions.create({ model: "x", messages: ask("cut once") });
    assert.equal(retry.choices[0]?.message.content, full);
  });

  it("cuts a non-streamed body short of its announced length", async () => {
    const got = await post({ model: "x", messages: ask("broken stream") });
    assert.equal(got.status, 200);
    assert.equal(got.complete, false);
    const announced = Number(got.headers["content-length"]);
    assert.ok(Buffer.byteLength(got.text) < announced, `${got.text.length} of ${announced}`);
    assert.throws(() => JSON.parse(got.text));
    assert.match(got.text, /^\{"id":"chatcmpl-/);
  });

  it("is an error to the official client, streamed or not, every time when it has no times", async () => {
    const silent = client.withOptions({ logLevel: "off" });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(silent.chat.completions.create({ model: "x", messages: ask("broken stream") }));
      await assert.rejects(async () => {
        const stream = await silent.chat.completions.create({
          model: "x",
          messages: ask("broken stream"),
          stream: true,
        });
        for await (const _ of stream) {
          // drain
        }
      });
    }
  });

  it("cuts a streamed tool call inside its arguments", async () => {
    const got = await post({ model: "x", messages: ask("cut tool"), stream: true });
    assert.equal(got.complete, false);
    const chunks = got.text
      .split("\n\n")
      .filter((e) => e.startsWith("data: "))
      .map((e) => JSON.parse(e.slice("data: ".length)));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(deltas[0]?.function.name, "bash");
    const args = deltas.map((d: Wire) => d.function.arguments).join("");
    const full = JSON.stringify({ command: "echo 'Hello, world!' > /app/hello.txt" });
    assert.ok(full.startsWith(args) && args !== full, args);
    const retry = await post({ model: "x", messages: ask("cut tool"), stream: true });
    assert.equal(retry.complete, true);
    assert.match(retry.text, /data: \[DONE\]/);
  });
});
