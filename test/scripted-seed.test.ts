// Per-rollout variation end to end: `bench run --trials 3` of bench-agent on a scripted policy that
// branches on the repeat (examples/policies/hello-repeats.json) gives a group whose rewards differ,
// and the gateway tells the policy which rollout and repeat each call belongs to.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { loadPolicyScript, startScriptedPolicy } from "../src/policy/scripted-server.js";
import { bench, EXAMPLES, REPO, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("scripted-seed");

describe("a scripted policy that branches on the repeat", () => {
  it("gives hello rewards 0, 1, 0 over --trials 3, the same on a second run", async () => {
    const script = await loadPolicyScript(path.join(REPO, "examples/policies/hello-repeats.json"));
    const policy = await startScriptedPolicy({ script, apiKey: "sk-upstream" });
    try {
      const runOnce = async (name: string) => {
        const jobs = path.join(scratch(), name);
        const run = await bench([
          "run",
          path.join(EXAMPLES, "hello"),
          "-a",
          "bench-agent",
          "-m",
          "vllm/scripted",
          "--base-url",
          policy.baseUrl,
          "--api-key",
          "sk-upstream",
          "--trials",
          "3",
          "--sandbox",
          "namespace",
          "--jobs-dir",
          jobs,
          "-q",
        ]);
        assert.equal(run.code, 0, `exit ${run.code}: ${run.stdout}${run.stderr}`);
        const found = await rollouts(jobs);
        const byRepeat = found.map((r) => ({
          trial: path.basename(path.dirname(path.dirname(r.dir))),
          name: path.basename(r.dir),
          reward: r.result?.rewards?.reward,
        }));
        return byRepeat.sort((a, b) => a.trial.localeCompare(b.trial));
      };
      const first = await runOnce("first");
      assert.deepEqual(
        first.map((r) => [r.trial, r.reward]),
        [
          ["trial-01", 0],
          ["trial-02", 1],
          ["trial-03", 0],
        ],
      );
      // Every upstream call named its rollout and repeat; the key the gateway holds still went with it.
      const chats = policy.requests.filter((r) => r.path === "/v1/chat/completions");
      assert.ok(chats.length >= 6, `${chats.length} calls`);
      for (const call of chats) {
        const rollout = first.find((r) => r.name === call.headers["x-benchflow-rollout"]);
        assert.ok(rollout, `a known rollout: ${call.headers["x-benchflow-rollout"]}`);
        assert.equal(call.headers["x-benchflow-repeat"], String(Number(rollout.trial.slice(-2))));
        assert.equal(call.headers.authorization, "Bearer sk-upstream");
      }
      const second = await runOnce("second");
      assert.deepEqual(
        second.map((r) => r.reward),
        [0, 1, 0],
      );
    } finally {
      await policy.close();
    }
  });
});
