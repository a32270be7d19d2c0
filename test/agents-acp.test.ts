// ACP agents: claude-agent-acp, codex-acp and qwen-code (its own ACP mode) run through the Agent Client Protocol (bench's client
// inside the sandbox, the adapters from npm, the scripted policy behind the gateway), recorded under
// the name the user typed; the seed's `bench train stream jobs/skills/claude-agent-acp ...` runs on
// what they wrote; `acp:<command>` runs any ACP agent; a handshake that fails is agent_setup.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  acpEvents,
  jsonLines,
  llmCalls,
  readJson,
  runAgent,
  scriptFor,
  shellCall,
  type Vocabulary,
} from "./testing/agents.js";
import { bench, EXAMPLES, REPO, useScratch } from "./testing/bench.js";
import { closedPort, runOutage } from "./testing/outage.js";

const scratch = useScratch("agents-acp");
const HELLO = "echo 'Hello, world!' > /app/hello.txt";
const WRONG = "echo 'Hello, World' > /app/hello.txt";

/** Repeat 2 writes the wrong greeting: rewards 1, 0, 1 give the group a spread. */
function spreadScript(vocabulary: Vocabulary) {
  const turn = (command: string) => [{ tool_calls: [shellCall(vocabulary, command)] }, { content: "Done." }];
  // Qwen Code opens with its setup context, not the instruction: its conversations match no text.
  const match = vocabulary === "qwen-code" ? {} : { match: "hello.txt" };
  return scriptFor(vocabulary, [
    { ...match, when: { repeat: 2 }, replies: turn(WRONG) },
    { ...match, replies: turn(HELLO) },
  ]);
}

/** The ACP messages bench's client sent and received, from the rollout's protocol log. */
async function protocolLog(dir: string, agent: string) {
  const lines = await jsonLines(path.join(dir, "agent", `${agent}.jsonl`));
  const sent = lines.filter((l) => l.dir === "send" && l.msg?.method).map((l) => l.msg.method);
  const updates = lines
    .filter((l) => l.dir === "recv" && l.msg?.method === "session/update")
    .map((l) => l.msg.params.update.sessionUpdate);
  return { sent, updates };
}

describe("ACP agents by their names", () => {
  for (const [agent, vocabulary] of [
    ["claude-agent-acp", "claude-code"],
    ["codex-acp", "codex"],
    ["qwen-code", "qwen-code"],
  ] as const) {
    it(`${agent}: three rollouts through ACP, recorded as ${agent}; the seed's stream command reads them`, async () => {
      const jobsDir = path.join(scratch(), agent);
      const { result, found } = await runAgent(spreadScript(vocabulary), {
        tasks: path.join(EXAMPLES, "hello"),
        agent,
        sandbox: "namespace",
        trials: 3,
        captureTokens: true,
        jobsDir,
      });
      assert.deepEqual(result.results.map((r) => [r.agent, r.error, r.rewards?.reward]).sort(), [
        [agent, null, 0],
        [agent, null, 1],
        [agent, null, 1],
      ]);
      // The typed name is the folder the seed's path names.
      assert.ok((await fs.stat(path.join(jobsDir, agent))).isDirectory());
      for (const { dir } of found) {
        const r = await readJson(path.join(dir, "result.json"));
        assert.equal(r.agent, agent);
        assert.equal(r.trajectory_source, "acp");
        const { sent, updates } = await protocolLog(dir, agent);
        assert.deepEqual(sent.slice(0, 3), ["initialize", "session/new", "session/prompt"]);
        assert.ok(updates.includes("tool_call") && updates.includes("agent_message_chunk"), updates.join());
        const events = await acpEvents(dir);
        const call = events.find((e) => e.type === "tool_call");
        assert.equal(call?.kind, "execute");
        assert.equal(call?.status, "completed");
        assert.match(JSON.stringify(call?.raw_input), /hello\.txt/);
        assert.ok(events.some((e) => e.type === "agent_message" && e.text.includes("Done.")));
        // The process that called the model is the one the relay trusts.
        const calls = await llmCalls(dir);
        assert.ok(calls.length >= 2);
        for (const c of calls)
          assert.equal(c.metadata.origin.kind, "agent", JSON.stringify(c.metadata.origin));
      }
      const run = await bench(
        [
          "train",
          "stream",
          path.join(jobsDir, agent),
          "--no-follow",
          "--group-size",
          "3",
          "--group-by",
          "task,agent,model",
        ],
        { cwd: REPO },
      );
      assert.equal(run.code, 0, run.stderr);
      const records = run.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.equal(records.length, 3);
      for (const r of records) {
        assert.match(r.group_id, new RegExp(`agent=${agent}\\|`));
        assert.ok(Math.abs(r.advantage) > 0.1, "the group's rewards spread, so each has an advantage");
      }
      // Their rows keep the tool calls the agent made.
      const out = path.join(scratch(), `${agent}.jsonl`);
      const convert = await bench(["train", "convert", path.join(jobsDir, agent), "--out", out], {
        cwd: REPO,
      });
      assert.equal(convert.code, 0, convert.stderr);
      const rows = await jsonLines(out);
      assert.ok(rows.length >= 3);
      assert.ok(
        rows.every(
          (row) => JSON.stringify(row).includes("hello.txt") && /tool_calls/.test(JSON.stringify(row)),
        ),
      );
    });
  }
});

describe("acp:<command>: any ACP agent", () => {
  it("runs an ACP agent the task's image has, under the name typed; its permission request is granted", async () => {
    const task = path.join(scratch(), "hello-acp");
    await fs.cp(path.join(EXAMPLES, "hello"), task, { recursive: true });
    await fs.copyFile(
      path.join(REPO, "test/fixtures/acp-agent/acp_agent.py"),
      path.join(task, "environment/acp_agent.py"),
    );
    await fs.appendFile(
      path.join(task, "environment/Dockerfile"),
      "COPY acp_agent.py /opt/acp/acp_agent.py\n",
    );
    const agent = "acp:python3 /opt/acp/acp_agent.py";
    const script = {
      conversations: [
        {
          replies: [{ tool_calls: [{ name: "bash", arguments: { command: HELLO } }] }, { content: "Done." }],
        },
      ],
    };
    const jobsDir = path.join(scratch(), "acp-command");
    const { result, found } = await runAgent(script, { tasks: task, agent, sandbox: "namespace", jobsDir });
    const [r] = result.results;
    assert.equal(r?.error, null);
    assert.equal(r?.agent, agent);
    assert.equal(r?.rewards?.reward, 1);
    const dir = found[0]?.dir ?? "";
    assert.ok(dir.startsWith(path.join(jobsDir, "acp_python3_opt_acp_acp_agent.py")), dir);
    const events = await acpEvents(dir);
    assert.equal(events.find((e) => e.type === "tool_call")?.status, "completed");
    for (const c of await llmCalls(dir)) assert.equal(c.metadata.origin.kind, "agent");
  });

  it("an ACP agent that fails the handshake is agent_setup, not a reward; a version-less package is refused", async () => {
    const jobsDir = path.join(scratch(), "acp-broken");
    const { result } = await runAgent(
      { conversations: [{ replies: [{ content: "unused" }] }] },
      {
        tasks: path.join(EXAMPLES, "hello"),
        agent: "acp:bash -c 'read line; exit 3'",
        sandbox: "namespace",
        jobsDir,
      },
    );
    const [r] = result.results;
    assert.equal(r?.error_category, "agent_setup");
    assert.match(r?.error ?? "", /ACP handshake failed: the adapter exited \(code 3\)/);
    assert.equal(r?.rewards, null);
    const refused = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "acp:some-acp-agent@latest",
      "-m",
      "vllm/x",
      "--dry-run",
    ]);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /pin the npm package's version exactly \(e\.g\. acp:some-acp-agent@1\.0\.0\)/,
    );
  });
});

describe("ACP agents: a dead endpoint", () => {
  it("claude-agent-acp, codex-acp and qwen-code against a port nothing listens on: provider_error, unscored", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    const runs = await Promise.all(
      (["claude-agent-acp", "codex-acp", "qwen-code"] as const).map((agent) =>
        runOutage(
          { conversations: [{ replies: [{ content: "unused" }] }] },
          {
            tasks: path.join(EXAMPLES, "hello"),
            agent,
            sandbox: "namespace",
            jobsDir: path.join(scratch(), `dead-${agent}`),
            policy: { firstByteTimeoutSec: 2, idleTimeoutSec: 2 },
          },
          { baseUrl },
        ),
      ),
    );
    for (const run of runs) {
      const [r] = run.result.results;
      assert.equal(r?.error_category, "provider_error", `${r?.agent}: ${r?.error}`);
      assert.equal(r?.rewards, null);
    }
  });
});
