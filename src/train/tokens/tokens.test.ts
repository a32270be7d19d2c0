import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toExchange } from "../../jobs-dir/exchange.js";
import { tokenIds, trajectoryLines } from "../../jobs-dir/testing/trajectory-builder.js";
import { tokenReport } from "./tokens.js";

function exchanges(tokens: boolean | "broken", calls = 3, extra: Array<{ status?: number }> = []) {
  const specs = [...Array.from({ length: calls }, () => ({})), ...extra];
  return trajectoryLines({ task: "t", model: "vllm/p", calls: specs, wire: "openai-chat", tokens }).map(
    (l, i) => toExchange(JSON.parse(l), i, "llm_trajectory.jsonl"),
  );
}

describe("tokenReport", () => {
  it("merges calls whose prompts extend the previous prompt plus its sampled tokens", () => {
    const report = tokenReport(exchanges(true));
    assert.equal(report.summary.status, "captured");
    assert.equal(report.summary.training_grade, true);
    assert.deepEqual(report.summary.prefix, { pairs: 2, extends_previous_call: 2, breaks: [] });
    const seq = report.sequences?.[0];
    assert.ok(seq);
    assert.deepEqual(seq.prompt_ids, tokenIds(0).prompt);
    // sampled(0), env token 50, sampled(1), env token 51, sampled(2)
    assert.deepEqual(seq.completion_ids, [100, 101, 50, 102, 103, 51, 104, 105]);
    assert.deepEqual(seq.completion_mask, [1, 1, 0, 1, 1, 0, 1, 1]);
    assert.deepEqual(seq.completion_logprobs, [-0.5, -0.25, 0, -0.5, -0.25, 0, -0.5, -0.25]);
    assert.equal(seq.kind, "agent");
    assert.deepEqual(seq.calls, [0, 1, 2]);
  });

  it("refuses to merge when a prompt rewrites history, and says where", () => {
    const report = tokenReport(exchanges("broken"));
    assert.equal(report.summary.training_grade, false);
    assert.equal(report.sequences, null);
    assert.match(
      report.summary.reason ?? "",
      /call 1's prompt does not begin with call 0's prompt and sampled tokens/,
    );
    assert.deepEqual(
      report.summary.prefix.breaks.map((b) => b.call),
      [1, 2],
    );
  });

  it("tells no capture apart from no trajectory", () => {
    assert.equal(tokenReport(exchanges(false)).summary.status, "capture_off");
    assert.equal(tokenReport(undefined).summary.status, "no_gateway_capture");
  });

  it("leaves failed calls out of the conversation", () => {
    const report = tokenReport(exchanges(true, 2, [{ status: 503 }]));
    assert.equal(report.summary.calls, 3);
    assert.equal(report.summary.captured_calls, 2);
    assert.deepEqual(report.summary.threads[0]?.calls, [0, 1]);
    assert.equal(report.summary.training_grade, true);
  });
});
