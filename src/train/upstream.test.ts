// A jobs folder laid out exactly as upstream BenchFlow writes it for `--trials 3` (fixtures/
// upstream-jobs/<alias>/trial-NN/<timestamp>/): a summary copy above each job, Python-style JSON, no
// `wire` in the call metadata, its own categories, and a retried attempt with no marker.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { convertJob } from "./convert/convert.js";
import { streamRollouts } from "./stream/stream.js";
import { validateFile } from "./validate/validate.js";

const JOBS = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "upstream-jobs",
  "claude-agent-acp",
);
const BY = "task,agent,model";
const out = fs.mkdtempSync(path.join(os.tmpdir(), "bf-upstream-"));
after(() => fs.rmSync(out, { recursive: true, force: true }));
const r3 = (x: unknown) => (typeof x === "number" ? Math.round(x * 1000) / 1000 : x);

describe("job folders written by upstream BenchFlow", () => {
  it("convert: Claude Code's Anthropic calls keep their tool calls; the timed-out rollout carries its error", async () => {
    const file = path.join(out, "rows.jsonl");
    const res = await convertJob({ jobs: JOBS, out: file, groupAdvantage: "grpo", groupBy: BY });
    assert.equal(res.rows, 3);
    assert.equal(res.rollouts, 3);
    // Upstream's rule: the earlier, unscored attempt of the same task in a job was retried.
    assert.deepEqual(
      res.manifest.retried.map((r) => [r.rollout, r.replaced_by]),
      [["hello-pass__0000000f", "hello-pass__00000001"]],
    );
    const rows = fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rows.map((r) => r3(r.advantage)),
      [0.577, -1.155, 0.577],
    );
    assert.equal(rows[0].group.id, "task=hello-pass|agent=claude-agent-acp|model=vllm/fake-policy");
    assert.equal(rows[1].job, "2026-01-01__12-03-00");
    assert.deepEqual(
      rows.map((r) => r.group.error),
      [undefined, "timeout", undefined],
    );
    const call = rows[0].messages.find((m: { tool_calls?: unknown[] }) => m.tool_calls)?.tool_calls[0];
    assert.deepEqual(call, {
      id: "toolu_01",
      type: "function",
      // An object input written as upstream's json.dumps writes it.
      function: { name: "Bash", arguments: '{"command": "echo hello > /app/hello.txt"}' },
    });
    assert.deepEqual(
      rows[0].tool_defs.map((t: { function: { name: string } }) => t.function.name),
      ["Bash", "Read"],
    );
    // A rate-limited first call is not a row; the row is the last successful call.
    assert.equal(rows[0].exchange_index, 2);
    assert.deepEqual(await validateFile(file, { requireToolCalls: true }), {
      ok: true,
      rows: 3,
      rows_with_tool_calls: 3,
    });
  });

  it("convert --format tokens merges the rollout that carries token capture", async () => {
    const file = path.join(out, "tokens.jsonl");
    const res = await convertJob({
      jobs: JOBS,
      out: file,
      format: "tokens",
      groupAdvantage: "grpo",
      groupBy: BY,
    });
    assert.equal(res.rows, 1);
    const row = JSON.parse(fs.readFileSync(file, "utf8"));
    assert.deepEqual(
      [row.prompt_ids, row.completion_ids, row.completion_mask],
      [
        [60, 124],
        [87, 114, 9, 7, 2],
        [1, 1, 0, 1, 1],
      ],
    );
    assert.equal(res.manifest.skipped_not_training_grade, 2);
  });

  it("stream: a finished upstream job streams and ends", async () => {
    const records = [];
    for await (const r of streamRollouts(JOBS, { groupSize: 3, groupBy: BY, timeoutMs: 10_000 }))
      records.push(r);
    assert.deepEqual(
      records.map((r) => [r.rollout_path, r.outcome, r.retried, r3(r.advantage)]),
      [
        ["trial-01/2026-01-01__12-00-00/hello-pass__0000000f", "errored", true, null],
        ["trial-01/2026-01-01__12-00-00/hello-pass__00000001", "passed", false, 0.577],
        ["trial-02/2026-01-01__12-03-00/hello-pass__00000002", "failed", false, -1.155],
        ["trial-03/2026-01-01__12-06-00/hello-pass__00000003", "passed", false, 0.577],
      ],
    );
    assert.equal(records[3]?.token_capture.training_grade, true);
    assert.equal(records[1]?.token_capture.status, "capture_off");
  });
});
