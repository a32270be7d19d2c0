// Per-rollout variation end to end: `bench run --trials 3` of bench-agent on a scripted policy that
// branches on the repeat (examples/policies/hello-repeats.json) gives a group whose rewards differ,
// and the gateway tells the policy which rollout and repeat each call belongs to.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, rollouts, useScratch } from "./testing/bench.js";
import { addViewRollout, makeViewRun } from "./testing/view-run.js";

const scratch = useScratch("scripted-seed");

/**
 * `bench run examples/tasks/hello --trials 3` of bench-agent on `baseUrl` into `name` under the
 * scratch folder, with `extra` flags; its rollouts by repeat (trial-01..03).
 */
async function helloGroup(baseUrl: string, name: string, extra: string[] = []) {
  const jobs = path.join(scratch(), name);
  const run = await bench([
    "run",
    path.join(EXAMPLES, "hello"),
    "-a",
    "bench-agent",
    "-m",
    "vllm/scripted",
    "--base-url",
    baseUrl,
    "--trials",
    "3",
    ...extra,
    "--sandbox",
    "namespace",
    "--jobs-dir",
    jobs,
    "-q",
  ]);
  assert.equal(run.code, 0, `exit ${run.code}: ${run.stdout}${run.stderr}`);
  return (await rollouts(jobs))
    .map((r) => ({
      trial: path.basename(path.dirname(path.dirname(r.dir))),
      name: path.basename(r.dir),
      dir: r.dir,
      reward: r.result?.rewards?.reward,
    }))
    .sort((a, b) => a.trial.localeCompare(b.trial));
}

/** Every chat call the policy got since `from`, each with the repeat of the rollout it named. */
function chatsByRepeat(
  policy: { requests: Array<{ path: string; headers: Record<string, string>; body: any }> },
  group: Array<{ name: string; trial: string }>,
  from = 0,
) {
  const chats = policy.requests.slice(from).filter((r) => r.path === "/v1/chat/completions");
  assert.ok(chats.length >= 6, `${chats.length} calls`);
  return chats.map((call) => {
    const rollout = group.find((r) => r.name === call.headers["x-benchflow-rollout"]);
    assert.ok(rollout, `a known rollout: ${call.headers["x-benchflow-rollout"]}`);
    return { call, repeat: Number(rollout.trial.slice(-2)) };
  });
}

describe("a scripted policy that branches on the repeat", () => {
  it("gives hello rewards 0, 1, 0 over --trials 3, the same on a second run", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello-repeats.json"));
    const policy = await startScriptedEndpoint({ script, apiKey: "sk-upstream" });
    try {
      const runOnce = (name: string) => helloGroup(policy.baseUrl, name, ["--api-key", "sk-upstream"]);
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
      for (const { call, repeat } of chatsByRepeat(policy, first)) {
        assert.equal(call.headers["x-benchflow-repeat"], String(repeat));
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

  it("with --seed 100, repeat k asks for seed 99 + k on every call, and a script branching on it gives 0, 1, 0", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello-seeds.json"));
    const policy = await startScriptedEndpoint({ script });
    try {
      const runOnce = (name: string, seed: string[]) => helloGroup(policy.baseUrl, name, seed);
      const seeded = await runOnce("seeded", ["--seed", "100"]);
      assert.deepEqual(
        seeded.map((r) => [r.trial, r.reward]),
        [
          ["trial-01", 0],
          ["trial-02", 1],
          ["trial-03", 0],
        ],
      );
      for (const { call, repeat } of chatsByRepeat(policy, seeded)) assert.equal(call.body.seed, 99 + repeat);
      // config.json records the base; each call's line of the trajectory, the seed that went upstream.
      const config = JSON.parse(await fs.readFile(path.join(seeded[1]?.dir ?? "", "config.json"), "utf8"));
      assert.equal(config.policy.sampling.seed, 100);
      const lines = (
        await fs.readFile(path.join(seeded[1]?.dir ?? "", "trajectory/llm_trajectory.jsonl"), "utf8")
      )
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.ok(lines.length >= 2);
      for (const line of lines) {
        const sent = line.metadata.upstream_request.body;
        assert.equal((typeof sent === "string" ? JSON.parse(sent) : sent).seed, 101);
      }
      // Without --seed no call carries one, so no seed condition holds: every rollout answers wrong.
      const before = policy.requests.length;
      const plain = await runOnce("plain", []);
      assert.deepEqual(
        plain.map((r) => r.reward),
        [0, 0, 0],
      );
      for (const { call } of chatsByRepeat(policy, plain, before)) assert.equal(call.body.seed, undefined);
    } finally {
      await policy.close();
    }
  });

  it("makes the viewer's fixture: what makeViewRun expects is what bench train computes", async () => {
    const view = await makeViewRun(path.join(scratch(), "view"));
    assert.equal(view.run.code, 1, "one rollout ended as an infrastructure failure");
    assert.deepEqual(view.spread.rewards, [0, 1, 0]);
    assert.deepEqual(
      view.withheld.rollouts.map((r) => r.errorCategory),
      [null, "provider_error", null],
    );
    const manifest = path.join(scratch(), "manifest.json");
    const convert = await bench([
      "train",
      "convert",
      view.jobsDir,
      "-o",
      path.join(scratch(), "rows.jsonl"),
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
      "--manifest",
      manifest,
    ]);
    assert.equal(convert.code, 0, convert.stderr);
    const groups = JSON.parse(await fs.readFile(manifest, "utf8")).training_signal.groups as {
      key: { task: string };
      members: { rollout_dir: string; advantage: number | null; withheld_reason?: string }[];
    }[];
    const members = (task: string) => {
      const group = groups.find((g) => g.key.task === task);
      const byPath = new Map(group?.members.map((m) => [path.relative(view.jobsDir, m.rollout_dir), m]));
      return (task === "pick-word" ? view.spread : view.withheld).rollouts.map((r) => byPath.get(r.path));
    };
    assert.deepEqual(
      members("pick-word").map((m) => m?.advantage?.toFixed(3)),
      view.spread.grpo,
    );
    assert.ok(members("flaky-endpoint").some((m) => m?.withheld_reason === view.withheld.withheld));
    // The tool call's output that a viewer must show as text is in the trajectory.
    const acp = await fs.readFile(
      path.join(view.jobsDir, view.spread.rollouts[0]?.path ?? "", "trajectory/acp_trajectory.jsonl"),
      "utf8",
    );
    assert.ok(acp.includes(view.scriptText));
    const added = await addViewRollout(view.jobsDir);
    assert.match(added.path, /^bench-agent\/trial-01\/view-more\/pick-word__[0-9a-f]{8}$/);
  });
});
