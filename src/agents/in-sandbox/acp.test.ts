// ACP protocol logs (recorded by bench's client from real runs of the pinned claude-agent-acp and
// codex-acp on the hello task) become upstream's trajectory events; the client's own end and error
// lines decide the failure's category.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAcpLog } from "./acp.js";
import { acpCommandDef } from "./acp-command.js";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
const fixture = (name: string) => readFile(path.join(FIXTURES, name), "utf8");

describe("ACP session/update -> trajectory", () => {
  for (const agent of ["claude-agent-acp", "codex-acp"]) {
    it(`${agent}: the shell call with its input, output and status; the closing message; no error`, async () => {
      const run = parseAcpLog(await fixture(`${agent}-hello.jsonl`));
      assert.equal(run.error, null);
      assert.equal(run.setupError, undefined);
      assert.equal(run.nToolCalls, 1);
      const [call] = run.events.filter((e) => e.type === "tool_call");
      assert.equal(call?.type === "tool_call" && call.kind, "execute");
      assert.equal(call?.type === "tool_call" && call.status, "completed");
      assert.match(JSON.stringify(call?.type === "tool_call" && call.raw_input), /Hello, world!/);
      const messages = run.events.filter((e) => e.type === "agent_message").map((e) => "text" in e && e.text);
      // Chunks of one message are joined; a tool call between two messages keeps them apart.
      assert.equal(messages.at(-1), "Done.");
    });
  }

  it("a handshake error is a setup failure; a prompt error and a stop before end_turn are the agent's", () => {
    const line = (v: unknown) => `${JSON.stringify(v)}\n`;
    const setup = parseAcpLog(line({ benchflow: "error", phase: "handshake", message: "session/new: nope" }));
    assert.equal(setup.setupError, "the ACP handshake failed: session/new: nope");
    const prompt = parseAcpLog(
      line({ benchflow: "error", phase: "prompt", message: "session/prompt: boom" }),
    );
    assert.equal(prompt.setupError, undefined);
    assert.equal(prompt.error, "failed: session/prompt: boom");
    const stopped = parseAcpLog(line({ benchflow: "end", stopReason: "max_tokens" }));
    assert.match(stopped.error ?? "", /stopReason "max_tokens"/);
    assert.equal(parseAcpLog(line({ benchflow: "end", stopReason: "end_turn" })).error, null);
  });

  it("message chunks join into one message; thought chunks into one thought", () => {
    const update = (u: unknown) =>
      `${JSON.stringify({ dir: "recv", msg: { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: u } } })}\n`;
    const chunk = (kind: string, text: string) =>
      update({ sessionUpdate: kind, content: { type: "text", text } });
    const run = parseAcpLog(
      chunk("agent_thought_chunk", "Let me ") +
        chunk("agent_thought_chunk", "think.") +
        chunk("agent_message_chunk", "Hel") +
        chunk("agent_message_chunk", "lo."),
    );
    assert.deepEqual(
      run.events.map((e) => [e.type, "text" in e ? e.text : null]),
      [
        ["agent_thought", "Let me think."],
        ["agent_message", "Hello."],
      ],
    );
  });
});

describe("acp:<agent> names", () => {
  it("a package must pin its version; an empty name says what to give", () => {
    assert.throws(
      () => acpCommandDef("acp:"),
      /an npm package with its version \(acp:@scope\/agent@1\.2\.3\)/,
    );
    assert.throws(
      () => acpCommandDef("acp:@scope/agent@latest"),
      /pin the npm package's version exactly \(e\.g\. acp:@scope\/agent@1\.0\.0\)/,
    );
    assert.equal(acpCommandDef("acp:@scope/agent@1.2.3").bundle.packages[0], "@scope/agent@1.2.3");
    assert.deepEqual(acpCommandDef("acp:my-agent --acp").bundle.packages, []);
  });
});
