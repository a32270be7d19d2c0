// Filling upstream's gaps in result.json: each case is a result upstream writes or reads (its tests,
// its aggregate payload, the legacy top-level reward), and what the train side makes of it.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { inferResult, parsePythonJson } from "./infer.js";
import { scanRollouts } from "./scan.js";
import { tmp } from "./testing/tmp.js";

const from = (
  config: Record<string, unknown> | null = null,
  plan: Record<string, unknown> | null = null,
) => ({
  name: "task-a__abc123",
  config,
  plan,
});

describe("inferResult", () => {
  it("upstream's smallest result: task kept, rollout_name from the folder, agent and model null", () => {
    const r = inferResult({ task_name: "task-a", rewards: { reward: 1.0 }, n_tool_calls: 1 }, from());
    assert.ok(!("problem" in r));
    assert.equal(r.result.rollout_name, "task-a__abc123");
    assert.equal(r.result.agent, null);
    assert.equal(r.result.model, null);
    assert.deepEqual(r.result.rewards, { reward: 1 });
    assert.deepEqual(r.inferred, { rollout_name: "folder name", agent: null, model: null });
  });

  it("agent and model from config.json before evaluation.json; an explicit null model stays null", () => {
    const r = inferResult(
      { task_name: "t", rewards: null },
      from({ agent: "opencode", model: "vendor/m" }, { agent: "other", model: "x" }),
    );
    assert.ok(!("problem" in r));
    assert.deepEqual([r.result.agent, r.result.model], ["opencode", "vendor/m"]);
    assert.deepEqual(r.inferred, { rollout_name: "folder name", agent: "config.json", model: "config.json" });
    const planned = inferResult(
      { task_name: "t", rewards: null, model: null },
      from(null, { agent: "oracle" }),
    );
    assert.ok(!("problem" in planned));
    assert.equal(planned.result.model, null);
    assert.deepEqual(planned.inferred, { rollout_name: "folder name", agent: "evaluation.json" });
  });

  it("the reward: rewards.reward, else a legacy top-level reward; a map without one is unscored, not 0", () => {
    const legacy = inferResult({ rewards: { partial: 0.5 }, reward: 0.0 }, from());
    assert.ok(!("problem" in legacy));
    assert.deepEqual(legacy.result.rewards, { partial: 0.5, reward: 0 });
    assert.equal(legacy.inferred.rewards, "reward");
    assert.equal(legacy.result.task_name, "task-a");
    const none = inferResult({ task_name: "t", rewards: { score: 1 } }, from());
    assert.ok(!("problem" in none));
    assert.equal(none.result.rewards, null);
    assert.equal(none.inferred.rewards, null);
    const bool = inferResult({ task_name: "t", reward: true }, from());
    assert.ok(!("problem" in bool));
    assert.equal(bool.result.rewards, null);
  });

  it("a complete result comes back with nothing inferred", () => {
    const whole = {
      task_name: "t",
      rollout_name: "t__00000001",
      agent: "oracle",
      model: null,
      rewards: { reward: 0.5 },
    };
    const r = inferResult(whole, from({ agent: "x", model: "y" }));
    assert.ok(!("problem" in r));
    assert.deepEqual(r.inferred, {});
    assert.deepEqual(r.ignored, {});
    assert.equal(r.result.agent, "oracle");
  });

  it("a field of the wrong type is left out and named; the rest of the result still counts", () => {
    const r = inferResult(
      { task_name: "t", agent: "a", model: "m", rewards: { reward: 1 }, agent_name: null, attempt: "2" },
      from(),
    );
    assert.ok(!("problem" in r));
    assert.deepEqual(Object.keys(r.ignored).sort(), ["agent_name", "attempt"]);
    assert.equal(r.result.rewards?.reward, 1);
  });

  it("Python's json.dumps output: NaN and Infinity read as null outside strings, kept inside them", () => {
    assert.deepEqual(parsePythonJson('{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN \\" Infinity"}'), {
      a: null,
      b: [null, null],
      c: 'NaN " Infinity',
    });
    assert.equal(parsePythonJson('{"a": '), undefined);
  });

  it("a rollout folder: the train side reads a result with NaN, the run side calls it cut short", async () => {
    const dir = path.join(tmp("bf-infer-"), "task-a__0badf00d");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, "result.json"),
      '{"task_name": "task-a", "rewards": {"reward": 1.0}, "agent_result": {"cost_usd": NaN}}',
    );
    const [train] = (await scanRollouts(dir, { infer: true })).rollouts;
    assert.ok(train);
    assert.equal(train.resultState, "present");
    assert.equal(train.reward, 1);
    assert.ok(train.ignored["(file)"]);
    const [run] = (await scanRollouts(dir, { infer: false })).rollouts;
    assert.ok(run);
    assert.equal(run.resultState, "truncated");
    assert.deepEqual(run.inferred, {});
  });
});
