// The real agent CLIs (claude-code, codex, opencode) in containers, against the scripted policy
// replying in each agent's own tool vocabulary: hello scores 1.0 twice, every call is recorded with
// its token capture, the trajectory keeps the agent's tool calls, and the rows pass
// `bench train validate --require-tool-calls`. The bundles come from the host cache (installed on
// first use), mounted read-only: the second trial never installs.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { loadEndpointScript } from "../src/scripted-endpoint/scripted-server.js";
import {
  acpEvents,
  CLI_AGENTS,
  jsonLines,
  llmCalls,
  readJson,
  runAgent,
  scriptFor,
  shellCall,
} from "./testing/agents.js";

import { bench, EXAMPLES, REPO, useScratch } from "./testing/bench.js";

const HELLO = "echo 'Hello, world!' > /app/hello.txt";

const scratch = useScratch("agents-ct");

describe("agent CLIs in the container sandbox", () => {
  for (const agent of CLI_AGENTS) {
    it(`${agent}: hello scores 1.0 twice, with token capture on every call and rows that keep tool calls`, async (t) => {
      if (!(await engineOrSkip(t))) return;
      const jobsDir = path.join(scratch(), agent);
      const script = await loadEndpointScript(path.join(REPO, `examples/policies/${agent}-hello.json`));
      const { result, requests, found } = await runAgent(script, {
        tasks: path.join(EXAMPLES, "hello"),
        agent,
        trials: 2,
        sandbox: "container",
        jobsDir,
        captureTokens: true,
      });
      assert.deepEqual(
        result.results.map((r) => [r.rewards?.reward ?? null, r.error]),
        [
          [1, null],
          [1, null],
        ],
      );
      // The gateway sent the user's model upstream on every call.
      assert.ok(requests.length >= 4);
      assert.ok(requests.every((r) => r.body?.model === "scripted"));
      const second = found.find((f) => f.result?.trial === "trial-02");
      for (const { dir, result: r } of found) {
        assert.equal(r?.sandbox, "container");
        assert.ok((r?.n_tool_calls ?? 0) >= 1, `${dir}: tool calls counted`);
        assert.ok(typeof r?.timing?.agent_start === "number", `${dir}: agent start time in timing.json`);
        const config = await readJson(path.join(dir, "config.json"));
        assert.equal(config.agent_install_path, "bundle-mount");
        assert.equal(config.sandbox_user, "agent");
        const calls = await llmCalls(dir);
        assert.equal(calls.length, r?.agent_result?.n_model_calls);
        for (const call of calls) {
          assert.equal(call.metadata.token_capture?.schema_version, "benchflow.token_capture.v1");
        }
        const events = await acpEvents(dir);
        const tool = events.find((e) => e.type === "tool_call");
        assert.match(JSON.stringify(tool?.raw_input), /hello\.txt/);
      }
      const secondConfig = await readJson(path.join(second?.dir ?? "", "config.json"));
      assert.equal(secondConfig.agent_installed_now, false, "the second trial found its bundle in the cache");
      const rows = path.join(scratch(), `${agent}-rows.jsonl`);
      const convert = await bench(["train", "convert", jobsDir, "-o", rows]);
      assert.equal(convert.code, 0, convert.stderr);
      const validate = await bench(["train", "validate", rows, "--require-tool-calls"]);
      assert.equal(validate.code, 0, validate.stdout + validate.stderr);
      assert.match(validate.stdout, /"rows": 2, "rows_with_tool_calls": 2/);
    });
  }
});

describe("ACP agents in the container sandbox", () => {
  for (const [agent, vocabulary] of [
    ["claude-agent-acp", "claude-code"],
    ["codex-acp", "codex"],
    ["qwen-code", "qwen-code"],
  ] as const) {
    it(`${agent}: hello scores 1.0 through ACP in the container; the calls are the agent's own`, async (t) => {
      if (!(await engineOrSkip(t))) return;
      const jobsDir = path.join(scratch(), agent);
      const script =
        vocabulary === "qwen-code"
          ? scriptFor(vocabulary, [
              { replies: [{ tool_calls: [shellCall(vocabulary, HELLO)] }, { content: "Done." }] },
            ])
          : await loadEndpointScript(path.join(REPO, `examples/policies/${vocabulary}-hello.json`));
      const { result, found } = await runAgent(script, {
        tasks: path.join(EXAMPLES, "hello"),
        agent,
        sandbox: "container",
        jobsDir,
        captureTokens: true,
      });
      assert.deepEqual(
        result.results.map((r) => [r.agent, r.rewards?.reward ?? null, r.error]),
        [[agent, 1, null]],
      );
      const dir = found[0]?.dir ?? "";
      const log = await jsonLines(path.join(dir, "agent", `${agent}.jsonl`));
      const sent = log.filter((l) => l.dir === "send" && l.msg?.method).map((l) => l.msg.method);
      assert.deepEqual(sent.slice(0, 3), ["initialize", "session/new", "session/prompt"]);
      const calls = await llmCalls(dir);
      assert.ok(calls.length >= 2);
      for (const c of calls) {
        assert.equal(c.metadata.origin.kind, "agent");
        assert.equal(c.metadata.token_capture?.schema_version, "benchflow.token_capture.v1");
      }
      const tool = (await acpEvents(dir)).find((e) => e.type === "tool_call");
      assert.equal(tool?.status, "completed");
    });
  }
});
