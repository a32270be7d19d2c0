// bench run with a model the user serves: bench-agent through the recording gateway to the
// scripted vLLM stand-in, in real sandboxes, scored by real verifiers.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { Evaluation } from "../src/job/evaluation.js";
import {
  type EndpointScript,
  loadEndpointScript,
  startScriptedEndpoint,
} from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, rollouts, useScratch } from "./testing/bench.js";

const KEY = "sk-upstream-secret-4242";
const scratch = useScratch("policy");

async function calls(rolloutDir: string): Promise<Record<string, any>[]> {
  const text = await fs.readFile(path.join(rolloutDir, "trajectory/llm_trajectory.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath ?? (e as { path: string }).path, e.name));
  }
  return out;
}

async function runWith(
  script: EndpointScript,
  task: string,
  jobs: string,
  extra: Record<string, unknown> = {},
  server: Record<string, unknown> = {},
) {
  const policy = await startScriptedEndpoint({ script, apiKey: KEY, ...server });
  try {
    const result = await new Evaluation({
      tasks: path.join(EXAMPLES, task),
      agent: "bench-agent",
      model: "vllm/scripted",
      jobsDir: path.join(scratch(), jobs),
      sandbox: "namespace",
      retryAttempts: 0,
      env: {},
      policy: { baseUrl: policy.baseUrl, apiKey: KEY, captureTokens: true, ...extra },
    }).run();
    return { result, requests: policy.requests, found: await rollouts(path.join(scratch(), jobs)) };
  } finally {
    await policy.close();
  }
}

describe("bench-agent on the scripted policy", () => {
  it("solves hello with reward 1.0, recording every call with token ids and logprobs", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const { result, requests, found } = await runWith(script, "hello", "hello");
    assert.equal(result.exitCode, 0);
    assert.equal(result.results[0]?.rewards?.reward, 1);
    const [rollout] = found;
    const recorded = await calls(rollout?.dir ?? "");
    const upstreamChats = requests.filter((r) => r.path.startsWith("/v1/chat/completions"));
    assert.equal(recorded.length, upstreamChats.length, "every model call is recorded");
    assert.ok(recorded.length >= 2);
    for (const call of recorded) {
      const tc = call.metadata.token_capture;
      assert.equal(tc.schema_version, "benchflow.token_capture.v1");
      assert.ok(tc.prompt_token_ids.length > 0);
      assert.ok(tc.completions[0].token_ids.length > 0);
      assert.equal(tc.completions[0].logprobs.length, tc.completions[0].token_ids.length);
      assert.deepEqual(tc.unavailable, {});
    }
    assert.equal(rollout?.result?.n_tool_calls, 2);
    assert.equal(rollout?.result?.agent_result.n_model_calls, recorded.length);
    assert.ok(rollout?.result?.agent_result.n_input_tokens > 0);
    assert.deepEqual(rollout?.result?.policy_versions, ["scripted"]);
    const events = (
      await fs.readFile(path.join(rollout?.dir ?? "", "trajectory/acp_trajectory.jsonl"), "utf8")
    )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual([...new Set(events.map((e) => e.type))].sort(), [
      "agent_message",
      "tool_call",
      "user_message",
    ]);
  });

  it("reaches partial credit on half-life when the script gets one check wrong", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/half-life-one-wrong.json"));
    const { result } = await runWith(script, "half-life", "half-life");
    assert.equal(result.results[0]?.rewards?.reward, 0.6667);
    assert.equal(
      result.results[0]?.test_last_line,
      "close_enough pass, plausible_uncertainty fail, consistent pass",
    );
  });

  it("enforces the sampling settings on every upstream call, records them, and keeps the key out of the sandbox and the jobs dir", async () => {
    const script: EndpointScript = {
      conversations: [
        {
          replies: [
            {
              tool_calls: [
                { name: "bash", arguments: { command: "env; cat /proc/self/environ | tr '\\0' '\\n'" } },
              ],
            },
            { tool_calls: [{ name: "submit", arguments: {} }] },
          ],
        },
      ],
    };
    const { requests, found } = await runWith(script, "hello", "sampling", {
      temperature: 0.3,
      topP: 0.9,
      maxTokens: 77,
      policyVersion: "ckpt-9",
    });
    const chats = requests.filter((r) => r.path.startsWith("/v1/chat/completions"));
    assert.ok(chats.length >= 2);
    for (const r of chats) {
      assert.equal(r.body.temperature, 0.3);
      assert.equal(r.body.top_p, 0.9);
      assert.equal(r.body.max_tokens ?? r.body.max_completion_tokens, 77);
      assert.equal(r.headers.authorization, `Bearer ${KEY}`, "the real key goes upstream");
    }
    const dir = found[0]?.dir ?? "";
    for (const call of await calls(dir)) {
      assert.equal(call.metadata.sampling.temperature, 0.3);
      assert.equal(call.metadata.policy_version, "ckpt-9");
    }
    assert.equal(found[0]?.result?.policy_version, "ckpt-9");
    const events = await fs.readFile(path.join(dir, "trajectory/acp_trajectory.jsonl"), "utf8");
    assert.match(events, /PATH=/, "the agent printed its environment");
    for (const file of await filesUnder(path.join(scratch(), "sampling"))) {
      assert.ok(!(await fs.readFile(file, "utf8")).includes(KEY), `the upstream key leaked into ${file}`);
    }
  });

  it("flags each call another policy version served than the run stamped, and masks its tokens rows with the reason", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const run = (jobs: string, served: string) =>
      runWith(script, "hello", jobs, { policyVersion: "ckpt-9" }, { versionHeader: served });
    for (const [jobs, served, mismatched] of [
      ["version-stale", "ckpt-8", true],
      ["version-same", "ckpt-9", false],
    ] as const) {
      const { found } = await run(jobs, served);
      const dir = found[0]?.dir ?? "";
      const lines = await calls(dir);
      assert.ok(lines.length >= 2);
      for (const call of lines) {
        assert.equal(call.metadata.policy_version, "ckpt-9", "the stamped version");
        assert.equal(call.metadata.served_policy_version, served, "what the server said");
        assert.equal(call.metadata.policy_version_mismatch, mismatched ? true : undefined);
      }
      const integrity = found[0]?.result?.gateway_integrity;
      assert.equal(integrity?.policy_version_mismatches, mismatched ? lines.length : undefined);
      const out = path.join(scratch(), `${jobs}.jsonl`);
      const converted = await bench([
        "train",
        "convert",
        path.join(scratch(), jobs),
        "--format",
        "tokens",
        "--out",
        out,
      ]);
      assert.equal(converted.code, 0, converted.stderr);
      const rows = (await fs.readFile(out, "utf8")).trim();
      if (mismatched) {
        assert.equal(rows, "", "no tokens row from another policy's samples");
        assert.match(
          converted.stdout + converted.stderr,
          /served by policy version "ckpt-8", not the run's "ckpt-9"/,
        );
      } else {
        assert.ok(rows.length > 0, "the same version gives its tokens rows");
      }
    }
  });

  it("says what is unavailable when the server gives no token ids", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const { found } = await runWith(script, "hello", "no-ids", {}, { tokenIds: false });
    for (const call of await calls(found[0]?.dir ?? "")) {
      const tc = call.metadata.token_capture;
      assert.equal(tc.unavailable.prompt_token_ids?.reason, "not_returned");
      assert.ok(tc.completions[0].logprobs.length > 0, "logprobs still captured");
    }
  });
});

describe("a failing policy endpoint", () => {
  for (const [what, reply] of [
    ["answers 500", { fail: { status: 500, body: "boom" } }],
    ["returns malformed JSON", { malformed: true }],
  ] as const) {
    it(`${what}: the call is recorded with its failure and the trial ends with provider_error, unscored`, async () => {
      const { result, found } = await runWith(
        { conversations: [{ replies: [reply] }] },
        "hello",
        `fail-${what.replace(/ /g, "-")}`,
      );
      assert.equal(result.exitCode, 1);
      const r = result.results[0];
      assert.equal(r?.error_category, "provider_error");
      assert.equal(r?.rewards, null);
      const recorded = await calls(found[0]?.dir ?? "");
      assert.ok(recorded.length >= 1);
      assert.ok(recorded.every((c) => c.response.status_code >= 500));
    });
  }

  it("is down: provider_error, exit 1, with the reason on the result line", async () => {
    const run = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "bench-agent",
      "-m",
      "vllm/scripted",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--jobs-dir",
      path.join(scratch(), "down"),
      "--sandbox",
      "namespace",
      "--retry-attempts",
      "0",
    ]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /trial-01  unscored \(provider_error\)/);
  });

  it("hangs past the gateway's timeout: provider_error", async () => {
    const { result } = await runWith({ conversations: [{ replies: [{ hang: true }] }] }, "hello", "hang", {
      upstreamTimeoutSec: 1,
    });
    assert.equal(result.results[0]?.error_category, "provider_error");
  });
});
