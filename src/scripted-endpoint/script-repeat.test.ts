// Per-rollout variation: conversations chosen by the rollout's repeat (`when: {repeat}`), which the
// scripted server reads from the gateway's x-benchflow-repeat header.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ROLLOUT_HEADERS } from "../gateway/rollouts.js";
import { chooseReply, type EndpointScript, loadEndpointScript, repeatOf, seedOf } from "./script.js";
import { startScriptedEndpoint } from "./scripted-server.js";

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "policy-repeat-"));
});
after(() => rm(dir, { recursive: true, force: true }));

const script: EndpointScript = {
  conversations: [
    { match: "task A", when: { repeat: 2 }, replies: [{ content: "A, second repeat" }] },
    { match: "task A", when: { repeat: [3, 5] }, replies: [{ content: "A, third or fifth" }] },
    { match: "task A", replies: [{ content: "A, any other repeat" }] },
    { when: { repeat: 1 }, replies: [{ content: "default, first repeat" }] },
    { replies: [{ content: "default" }] },
  ],
};
const user = (text: string) => [{ role: "user", content: text }];
const contentFor = (text: string, repeat: number) =>
  (chooseReply(script, user(text), undefined, { repeat })?.reply as { content?: string } | undefined)
    ?.content;

describe("when: {repeat}", () => {
  it("picks the first conversation whose match and repeat both hold, the same on every call", () => {
    assert.equal(contentFor("do task A", 1), "A, any other repeat");
    assert.equal(contentFor("do task A", 2), "A, second repeat");
    assert.equal(contentFor("do task A", 3), "A, third or fifth");
    assert.equal(contentFor("do task A", 4), "A, any other repeat");
    assert.equal(contentFor("do task A", 5), "A, third or fifth");
    assert.equal(contentFor("do task A", 2), "A, second repeat");
    assert.equal(contentFor("something else", 1), "default, first repeat");
    assert.equal(contentFor("something else", 2), "default");
  });

  it("treats a request that does not say as repeat 1", () => {
    assert.equal(
      (chooseReply(script, user("do task A"))?.reply as { content?: string } | undefined)?.content,
      "A, any other repeat",
    );
    assert.equal(repeatOf(undefined), 1);
    assert.equal(repeatOf("3"), 3);
    assert.equal(repeatOf(["2", "9"]), 2);
    for (const bad of ["0", "-1", "1.5", "two", ""]) assert.equal(repeatOf(bad), 1, bad);
  });

  it("gives each conversation its own tool-call ids", () => {
    const two = chooseReply(script, user("do task A"), undefined, { repeat: 2 });
    const one = chooseReply(script, user("do task A"), undefined, { repeat: 1 });
    assert.notEqual(two?.conversationKey, one?.conversationKey);
  });

  it("rejects a bad condition with the file, the field and the fix", async () => {
    const cases: [string, unknown, RegExp][] = [
      [
        "zero.json",
        { repeat: 0 },
        /zero\.json: conversations\[0\]\.when\.repeat: expected a repeat number >= 1/,
      ],
      [
        "text.json",
        { repeat: "2" },
        /text\.json: conversations\[0\]\.when\.repeat: expected a repeat number/,
      ],
      ["empty.json", { repeat: [] }, /empty\.json: conversations\[0\]\.when\.repeat: expected/],
      ["frac.json", { repeat: [1, 2.5] }, /frac\.json: conversations\[0\]\.when\.repeat: expected/],
      ["none.json", {}, /none\.json: conversations\[0\]\.when: expected a condition such as/],
      [
        "sed.json",
        { sed: 3 },
        /sed\.json: conversations\[0\]\.when\.sed: unknown condition; use "repeat" or "seed"/,
      ],
      [
        "neg.json",
        { seed: -1 },
        /neg\.json: conversations\[0\]\.when\.seed: expected a seed \(a whole number >= 0\)/,
      ],
      ["str.json", { seed: "7" }, /str\.json: conversations\[0\]\.when\.seed: expected a seed/],
      ["list.json", [2], /list\.json: conversations\[0\]\.when: expected an object such as \{"repeat": 2\}/],
    ];
    for (const [name, when, pattern] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, JSON.stringify({ conversations: [{ when, replies: [] }] }));
      await assert.rejects(loadEndpointScript(file), pattern, name);
    }
    const typo = path.join(dir, "typo.json");
    await writeFile(typo, JSON.stringify({ conversations: [{ wen: { repeat: 2 }, replies: [] }] }));
    await assert.rejects(
      loadEndpointScript(typo),
      /typo\.json: conversations\[0\]\.wen: unknown field; a conversation has match, when and replies/,
    );
  });

  it("reads the repeat from the x-benchflow-repeat header over HTTP", async () => {
    const endpoint = await startScriptedEndpoint({ script });
    try {
      const ask = async (headers: Record<string, string>) => {
        const res = await fetch(`${endpoint.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ model: "m", messages: user("do task A") }),
        });
        const body = (await res.json()) as { choices: { message: { content: string } }[] };
        return body.choices[0]?.message.content;
      };
      assert.equal(
        await ask({ [ROLLOUT_HEADERS.repeat]: "2", [ROLLOUT_HEADERS.rollout]: "a__1" }),
        "A, second repeat",
      );
      assert.equal(await ask({ [ROLLOUT_HEADERS.repeat]: "5" }), "A, third or fifth");
      assert.equal(await ask({}), "A, any other repeat");
    } finally {
      await endpoint.close();
    }
  });
});

// `when: {seed}` branches on the request's own `seed` field, as `bench run --seed` makes the gateway
// send it; a request without a seed matches no seed condition.
describe("when: {seed}", () => {
  const seeded: EndpointScript = {
    conversations: [
      { match: "task B", when: { seed: 101 }, replies: [{ content: "B, seed 101" }] },
      {
        match: "task B",
        when: { seed: [7, 9], repeat: 2 },
        replies: [{ content: "B, seed 7 or 9 at repeat 2" }],
      },
      { match: "task B", replies: [{ content: "B, any seed" }] },
    ],
  };

  it("picks the conversation whose seed (and repeat, when both are given) holds", () => {
    const pick = (ctx: { repeat: number; seed?: number }) =>
      (chooseReply(seeded, user("do task B"), undefined, ctx)?.reply as { content?: string } | undefined)
        ?.content;
    assert.equal(pick({ repeat: 1, seed: 101 }), "B, seed 101");
    assert.equal(pick({ repeat: 2, seed: 9 }), "B, seed 7 or 9 at repeat 2");
    assert.equal(pick({ repeat: 1, seed: 9 }), "B, any seed");
    assert.equal(pick({ repeat: 1 }), "B, any seed");
    assert.equal(seedOf({ seed: 5 }), 5);
    for (const bad of [{ seed: "5" }, { seed: 1.5 }, {}, null]) assert.equal(seedOf(bad), undefined);
  });

  it("reads the seed from the request body over HTTP", async () => {
    const endpoint = await startScriptedEndpoint({ script: seeded });
    try {
      const ask = async (extra: Record<string, unknown>) => {
        const res = await fetch(`${endpoint.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: user("do task B"), ...extra }),
        });
        const body = (await res.json()) as { choices: { message: { content: string } }[] };
        return body.choices[0]?.message.content;
      };
      assert.equal(await ask({ seed: 101 }), "B, seed 101");
      assert.equal(await ask({ seed: 102 }), "B, any seed");
      assert.equal(await ask({}), "B, any seed");
    } finally {
      await endpoint.close();
    }
  });
});
