// The seed's cost line at a run's end: "Each rollout cost about $0.01 (190,000 to 270,000 tokens) and
// took 2 to 5 minutes.", from what each rollout's result.json says it spent.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RolloutResult } from "../schemas/result.js";
import { costLine } from "./format.js";

const rollout = (
  tokens: number,
  cost: number | null,
  minutes: number,
  model = "deepseek/deepseek-v4-flash",
) =>
  ({
    task_name: "half-life",
    rollout_name: "half-life__0",
    model,
    started_at: "2026-12-01T10:00:00.000Z",
    finished_at: new Date(Date.parse("2026-12-01T10:00:00.000Z") + minutes * 60_000).toISOString(),
    agent_result: { n_tool_calls: 0, n_prompts: 1, total_tokens: tokens, cost_usd: cost },
  }) as unknown as RolloutResult;

describe("the run's cost line", () => {
  it("reads as the seed's: about the mean cost, the token range, the time range, and the whole run's", () => {
    const line = costLine([
      rollout(190_000, 0.008, 2.1),
      rollout(270_000, 0.012, 4.6),
      rollout(230_000, 0.01, 3),
      rollout(200_000, 0.01, 2.5),
    ]);
    assert.equal(
      line,
      "Each rollout cost about $0.01 (190,000 to 270,000 tokens) and took 2 to 5 minutes; $0.04 in all.",
    );
  });

  it("one rollout, seconds, and a cost under a cent in two figures", () => {
    assert.equal(
      costLine([rollout(2267, 0.00029, 1 / 60)]),
      "The rollout cost about $0.00029 (2,267 tokens) and took 1 second.",
    );
  });

  it("a hosted model without a price says how to give one; a model you serve, or no model call, says nothing", () => {
    assert.match(
      costLine([rollout(1000, null, 1, "deepseek/unlisted")]) ?? "",
      /^The rollout used 1,000 tokens and took 60 seconds; cost unknown \(the price table has no deepseek\/unlisted: pass --price IN,OUT\)\.$/,
    );
    assert.equal(costLine([rollout(1000, null, 1, "vllm/my-policy")]), null);
    assert.equal(costLine([rollout(0, null, 1)]), null);
  });
});
