import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { UserInputError } from "../errors.js";
import { chooseReply, loadPolicyScript, type PolicyScript } from "./script.js";

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

describe("loadPolicyScript", () => {
  it("reads JSON and YAML scripts", async () => {
    const json = await write("a.json", JSON.stringify({ conversations: [{ replies: [{ content: "hi" }] }] }));
    assert.deepEqual(await loadPolicyScript(json), { conversations: [{ replies: [{ content: "hi" }] }] });
    const yaml = await write(
      "b.yaml",
      "conversations:\n  - match: half-life\n    replies:\n      - tool_calls:\n          - name: bash\n            arguments: {command: ls}\n      - fail: {status: 503}\n",
    );
    const script = await loadPolicyScript(yaml);
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
    ];
    for (const [name, data, pattern] of cases) {
      const file = await write(name, JSON.stringify(data));
      await assert.rejects(
        loadPolicyScript(file),
        (err: Error) => err instanceof UserInputError && pattern.test(err.message),
      );
    }
    const broken = await write("broken.json", "{");
    await assert.rejects(loadPolicyScript(broken), /broken\.json: not valid JSON/);
    await assert.rejects(loadPolicyScript(path.join(dir, "absent.json")), /absent\.json: cannot read/);
  });
});

describe("chooseReply", () => {
  const script: PolicyScript = {
    conversations: [
      { match: "half-life", replies: [{ content: "h0" }, { content: "h1" }] },
      { replies: [{ content: "d0" }] },
    ],
  };
  const user = (text: string) => ({ role: "user", content: text });
  const assistant = { role: "assistant", content: "x" };

  it("picks the conversation by a substring of the first user message, else the default", () => {
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
