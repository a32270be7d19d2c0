// More agent CLIs, run unmodified from their npm bundles, offline, against the scripted policy in
// their own tool vocabularies: Kilo Code's CLI (`-a kilo`, OpenCode's fork, chat), Gemini CLI
// (`-a gemini-cli`, Gemini's generateContent) and pi (`-a pi`, chat). Each: hello scores 1.0 in both sandboxes with token
// capture on every call, the calls are the agent's own, its tool calls reach the trajectory and the
// rows, and a dead endpoint is provider_error.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { jsonLines, llmCalls, runAgent, scriptFor, shellCall, type Vocabulary } from "./testing/agents.js";
import { bench, EXAMPLES, useScratch } from "./testing/bench.js";
import { closedPort, runOutage } from "./testing/outage.js";

const scratch = useScratch("agents-more");
/** Each agent, the vocabulary its tools speak, and the dialect it calls the gateway in. */
const AGENTS: [string, Vocabulary, string][] = [
  ["kilo", "opencode", "openai-chat"],
  ["gemini-cli", "gemini-cli", "gemini-generate-content"],
  ["pi", "pi", "openai-chat"],
];
const HELLO = "echo 'Hello, world!' > /app/hello.txt";

for (const [agent, vocabulary, wire] of AGENTS)
  describe(agent, () => {
    for (const sandbox of ["namespace", "container"] as const) {
      it(`${sandbox} sandbox: hello scores 1.0, every call captured and the agent's, rows keep the tool call`, async (t) => {
        if (sandbox === "container" && !(await engineOrSkip(t))) return;
        const jobsDir = path.join(scratch(), `${agent}-${sandbox}`);
        const script = scriptFor(vocabulary, [
          { replies: [{ tool_calls: [shellCall(vocabulary, HELLO)] }, { content: "Done." }] },
        ]);
        const { result, found } = await runAgent(script, {
          tasks: path.join(EXAMPLES, "hello"),
          agent,
          sandbox,
          jobsDir,
          captureTokens: true,
        });
        assert.deepEqual(
          result.results.map((r) => [r.agent, r.rewards?.reward ?? null, r.error]),
          [[agent, 1, null]],
        );
        const dir = found[0]?.dir ?? "";
        const calls = await llmCalls(dir);
        assert.ok(calls.length >= 2, `${agent} made its calls through the gateway: ${calls.length}`);
        for (const c of calls) {
          assert.equal(c.metadata.wire, wire);
          assert.equal(c.metadata.origin.kind, "agent");
          assert.equal(c.metadata.token_capture?.schema_version, "benchflow.token_capture.v1");
        }
        const events = await jsonLines(path.join(dir, "trajectory", "acp_trajectory.jsonl"));
        const tool = events.find((e) => e.type === "tool_call");
        assert.equal(tool?.status, "completed");
        assert.match(JSON.stringify(tool?.raw_input), /hello\.txt/);
        const rows = path.join(scratch(), `${agent}-${sandbox}-rows.jsonl`);
        assert.equal((await bench(["train", "convert", jobsDir, "-o", rows])).code, 0);
        const validate = await bench(["train", "validate", rows, "--require-tool-calls"]);
        assert.equal(
          validate.code,
          0,
          validate.stdout + validate.stderr + (await import("node:fs")).readFileSync(rows, "utf8"),
        );
      });
    }

    it("a dead endpoint is provider_error, unscored", async () => {
      const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
      const run = await runOutage(
        { conversations: [{ replies: [{ content: "unused" }] }] },
        {
          tasks: path.join(EXAMPLES, "hello"),
          agent,
          sandbox: "namespace",
          jobsDir: path.join(scratch(), `${agent}-dead`),
          policy: { firstByteTimeoutSec: 2, idleTimeoutSec: 2 },
        },
        { baseUrl },
      );
      const [r] = run.result.results;
      assert.equal(r?.error_category, "provider_error", r?.error ?? "");
      assert.equal(r?.rewards, null);
    });
  });
