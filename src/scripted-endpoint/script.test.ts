import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { UserInputError } from "../errors.js";
import { chooseReply, type EndpointScript, loadEndpointScript } from "./script.js";

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "policy-script-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

describe("loadEndpointScript", () => {
  it("reads JSON and YAML scripts", async () => {
    const json = await write("a.json", JSON.stringify({ conversations: [{ replies: [{ content: "hi" }] }] }));
    assert.deepEqual(await loadEndpointScript(json), { conversations: [{ replies: [{ content: "hi" }] }] });
    const yaml = await write(
      "b.yaml",
      "conversations:\n  - match: half-life\n    replies:\n      - tool_calls:\n          - name: bash\n            arguments: {command: ls}\n      - fail: {status: 503}\n",
    );
    const script = await loadEndpointScript(yaml);
    assert.equal(script.conversations[0]?.match, "half-life");
    assert.deepEqual(script.conversations[0]?.replies[1], { fail: { status: 503 } });
  });

  it("names the file and the field in errors", async () => {
    const cases: [string, unknown, RegExp][] = [
      ["no-conv.json", { replies: [] }, /no-conv\.json: conversations: missing/],
      [
        "bad-status.json",
        { conversations: [{ replies: [{ fail: { status: 42 } }] }] },
        /conversations\[0\]\.replies\[0\]\.fail\.status/,
      ],
      [
        "bad-call.json",
        { conversations: [{ replies: [{}, { tool_calls: [{ arguments: {} }] }] }] },
        /bad-call\.json: conversations\[0\]\.replies\[1\]\.tool_calls\[0\]\.name: expected the tool's name/,
      ],
      [
        "typo.json",
        { conversations: [{ replies: [{ contnet: "x" }] }] },
        /replies\[0\]\.contnet: unknown field/,
      ],
      [
        "mixed.json",
        { conversations: [{ replies: [{ hang: true, content: "x" }] }] },
        /"hang" must be the only field/,
      ],
      [
        "times-zero.json",
        { conversations: [{ replies: [{ fail: { status: 500 }, times: 0 }] }] },
        /conversations\[0\]\.replies\[0\]\.times: expected a whole number >= 1/,
      ],
      [
        "times-text.json",
        { conversations: [{ replies: [{ content: "x", times: 2 }] }] },
        /replies\[0\]\.times: only a failure reply \(fail, hang, malformed or cut\) takes "times"/,
      ],
      [
        "cut-false.json",
        { conversations: [{ replies: [{}, { cut: false }] }] },
        /conversations\[0\]\.replies\[1\]\.cut: expected true/,
      ],
      [
        "cut-mixed.json",
        { conversations: [{ replies: [{ cut: true, malformed: true }] }] },
        /replies\[0\]: "malformed" must be the only field of its reply, besides "times"/,
      ],
    ];
    for (const [name, data, pattern] of cases) {
      const file = await write(name, JSON.stringify(data));
      await assert.rejects(
        loadEndpointScript(file),
        (err: Error) => err instanceof UserInputError && pattern.test(err.message),
      );
    }
    const broken = await write("broken.json", "{");
    await assert.rejects(loadEndpointScript(broken), /broken\.json: not valid JSON/);
    await assert.rejects(loadEndpointScript(path.join(dir, "absent.json")), /absent\.json: cannot read/);
  });
});

describe("chooseReply", () => {
  const script: EndpointScript = {
    conversations: [
      { match: "half-life", replies: [{ content: "h0" }, { content: "h1" }] },
      { replies: [{ content: "d0" }] },
    ],
  };
  const user = (text: string) => ({ role: "user", content: text });
  const assistant = { role: "assistant", content: "x" };

  it("picks the conversation by a substring of the opening user message, else the default", () => {
    assert.deepEqual(
      chooseReply(script, [{ role: "system", content: "half-life" }, user("Estimate the half-life")])?.reply,
      {
        content: "h0",
      },
    );
    assert.deepEqual(chooseReply(script, [user("hello"), assistant, user("half-life")])?.reply, {
      content: "done",
    });
    assert.deepEqual(chooseReply(script, [user("hello")])?.reply, { content: "d0" });
  });

  it("matches on every user message before the first assistant message, as Codex opens with two", () => {
    const opening = [
      { role: "system", content: "You are Codex." },
      user("<environment_context>/app</environment_context>"),
      { role: "user", content: [{ type: "text", text: "Estimate the half-life" }] },
    ];
    assert.deepEqual(chooseReply(script, opening)?.reply, { content: "h0" });
    assert.deepEqual(chooseReply(script, [...opening, assistant, user("more")])?.reply, { content: "h1" });
    // A later user message is not part of the opening: it neither selects nor changes the conversation.
    const later = [user("hello"), assistant, user("half-life")];
    assert.equal(chooseReply(script, later)?.turn, 1);
    assert.deepEqual(chooseReply(script, later)?.reply, { content: "done" });
    assert.equal(
      chooseReply(script, later)?.conversationKey,
      chooseReply(script, [user("hello")])?.conversationKey,
    );
  });

  it('counts assistant messages as the turn and answers "done" past the end', () => {
    const chosen = chooseReply(script, [user("half-life"), assistant, { role: "tool", content: "r" }]);
    assert.equal(chosen?.turn, 1);
    assert.deepEqual(chosen?.reply, { content: "h1" });
    assert.deepEqual(chooseReply(script, [user("half-life"), assistant, assistant])?.reply, {
      content: "done",
    });
  });

  it("keys conversations apart and returns undefined when nothing matches and there is no default", () => {
    const a = chooseReply(script, [user("task A")])?.conversationKey;
    const b = chooseReply(script, [user("task B")])?.conversationKey;
    assert.ok(a && b && a !== b);
    assert.equal(chooseReply(script, [user("task A")])?.conversationKey, a);
    assert.equal(chooseReply({ conversations: [{ match: "x", replies: [] }] }, [user("y")]), undefined);
  });
});

describe("chooseReply with transient failures (times)", () => {
  const user = (text: string) => ({ role: "user", content: text });
  const assistant = { role: "assistant", content: "x" };
  const script: EndpointScript = {
    conversations: [
      {
        replies: [
          { fail: { status: 500 }, times: 2 },
          { content: "a0" },
          { malformed: true, times: 1 },
          { hang: true, times: 1 },
          { content: "a1" },
          { cut: true, times: 1 },
        ],
      },
    ],
  };
  const counter = () => {
    const seen = new Map<string, number>();
    return (key: string) => {
      const n = seen.get(key) ?? 0;
      seen.set(key, n + 1);
      return n;
    };
  };

  it("gives the first N requests of a turn the failure, then the reply that answers the turn", () => {
    const attempts = counter();
    const turn0 = [1, 2, 3, 4].map(() => chooseReply(script, [user("go")], attempts)?.reply);
    assert.deepEqual(turn0, [
      { fail: { status: 500 }, times: 2 },
      { fail: { status: 500 }, times: 2 },
      { content: "a0" },
      { content: "a0" },
    ]);
    // A transient failure is not a turn: the request with one assistant message is turn 1, whose
    // failures come one after another before its answer.
    const turn1 = [1, 2, 3].map(() => chooseReply(script, [user("go"), assistant], attempts)?.reply);
    assert.deepEqual(turn1, [{ malformed: true, times: 1 }, { hang: true, times: 1 }, { content: "a1" }]);
    // Failures at the end of the list precede "done".
    const turn2 = [1, 2].map(() => chooseReply(script, [user("go"), assistant, assistant], attempts));
    assert.deepEqual(
      turn2.map((c) => c?.reply),
      [{ cut: true, times: 1 }, { content: "done" }],
    );
    assert.deepEqual(turn2[0]?.answer, { content: "done" });
  });

  it("counts per conversation and turn, and treats every request as the first without a counter", () => {
    const attempts = counter();
    assert.ok("fail" in (chooseReply(script, [user("task A")], attempts)?.reply ?? {}));
    assert.ok("fail" in (chooseReply(script, [user("task B")], attempts)?.reply ?? {}));
    assert.ok("fail" in (chooseReply(script, [user("task A")], attempts)?.reply ?? {}));
    assert.deepEqual(chooseReply(script, [user("task A")], attempts)?.reply, { content: "a0" });
    assert.ok("fail" in (chooseReply(script, [user("task B")], attempts)?.reply ?? {}));
    for (let i = 0; i < 3; i++) assert.ok("fail" in (chooseReply(script, [user("task A")])?.reply ?? {}));
    assert.deepEqual(chooseReply(script, [user("task A")])?.answer, { content: "a0" });
  });
});
