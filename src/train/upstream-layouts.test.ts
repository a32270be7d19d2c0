// Every jobs folder layout upstream BenchFlow writes, built here by hand from its documented shapes
// (the reference's §3 and upstream's own tests), not with our job builder: a 0.7.x job with a summary
// copy above it, a rollout folder given directly, a `--trials N` matrix (<alias>/trial-NN/<timestamp>),
// and a 0.8+ job (evaluation.json, .evaluation.lock, groups/, results.jsonl, rollout_group attempts
// `<task>__<group_id>-rNN-aK`). Each converts to the rows upstream documents (§5.4).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { loadJob } from "../jobs-dir/load-job.js";
import { tmp } from "../jobs-dir/testing/tmp.js";
import { convertJob } from "./convert/convert.js";
import { streamRollouts } from "./stream/stream.js";
import { validateFile } from "./validate/validate.js";

/** Writes text as upstream's Python writes it (json.dumps: floats keep their `.0`). */
function put(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

const FINISH_TOOL = {
  type: "function",
  function: { name: "finish", parameters: { type: "object", properties: {} } },
};

/** One line of trajectory/llm_trajectory.jsonl, the LLMExchange shape of §3.4. */
function exchange(opts: { model: string; user: string; status?: number; answer?: string }): string {
  const status = opts.status ?? 200;
  const body =
    status === 200
      ? {
          choices: [
            {
              message: opts.answer
                ? { role: "assistant", content: opts.answer }
                : {
                    role: "assistant",
                    content: "",
                    tool_calls: [
                      { id: "call_1", type: "function", function: { name: "finish", arguments: "{}" } },
                    ],
                  },
            },
          ],
          usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
        }
      : { error: { message: "rate limited", type: "rate_limit_error" } };
  return JSON.stringify({
    request: {
      timestamp: "2026-01-01T12:00:01",
      method: "POST",
      path: "/chat/completions",
      headers: {},
      body: {
        model: opts.model,
        messages: [
          { role: "system", content: "You are a coding agent." },
          { role: "user", content: opts.user },
        ],
        tools: [FINISH_TOOL],
        stream: true,
      },
    },
    response: { timestamp: "2026-01-01T12:00:02", status_code: status, headers: {}, body },
    duration_ms: 812.5,
    metadata: {
      request_model: opts.model,
      provider_model: opts.model,
      call_type: "acompletion",
      input_shape: { has_messages: true, has_input: false, n_messages: 2 },
      call_purpose: "agent",
    },
  });
}

const AGENT_RESULT_0_7 =
  '{"n_tool_calls": 1, "n_skill_invocations": 0, "n_prompts": 1, "n_input_tokens": 12, "n_output_tokens": 3, ' +
  '"n_cache_read_tokens": 0, "n_cache_creation_tokens": 0, "total_tokens": 15, "cost_usd": null, ' +
  '"usage_source": "provider_response", "price_source": null}';

const readRows = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

/**
 * A 0.7.x jobs dir: `<jobs>/summary.json` (copy of the latest) and one job `<jobs>/<timestamp>/`
 * whose rollouts carry results as small as upstream's tests write them.
 */
function jobs07(): { jobs: string; job: string } {
  const jobs = path.join(tmp("bf-up07-"), "jobs");
  const job = path.join(jobs, "2026-01-01__12-00-00");
  const summary =
    '{"job_name": "2026-01-01__12-00-00", "agent": "opencode", "total": 3, "passed": 1, "failed": 1, "errored": 1, "verifier_errored": 0}';
  put(path.join(jobs, "summary.json"), summary);
  put(path.join(job, "summary.json"), summary);
  // test_train_trl_cli.py's result.json: task_name, agent, rewards, n_tool_calls; no rollout_name, no model.
  const a = path.join(job, "task-a__1a2b3c4d");
  put(
    path.join(a, "result.json"),
    '{"task_name": "task-a", "agent": "opencode", "rewards": {"reward": 1.0}, "n_tool_calls": 1}',
  );
  put(
    path.join(a, "config.json"),
    '{"task_path": "task-a", "agent": "opencode", "model": "deepseek/deepseek-v4-flash", "environment": "docker", "timeout_sec": 900, "agent_env": {}}',
  );
  put(
    path.join(a, "trajectory", "llm_trajectory.jsonl"),
    `${exchange({ model: "deepseek-v4-flash", user: "do task a", status: 429 })}\n${exchange({ model: "deepseek-v4-flash", user: "do task a" })}\n`,
  );
  // No task_name, a legacy top-level reward, no agent or model and no config.json.
  const b = path.join(job, "task-b__00ff00ff");
  put(
    path.join(b, "result.json"),
    `{"rollout_name": "task-b__00ff00ff", "reward": 0.0, "agent_result": ${AGENT_RESULT_0_7}, "error": null, "verifier_error": null, "partial_trajectory": false}`,
  );
  put(
    path.join(b, "trajectory", "llm_trajectory.jsonl"),
    `${exchange({ model: "qwen3-8b", user: "do task b" })}\n`,
  );
  // An agent error: no row (upstream's _result_training_skip_reason).
  const c = path.join(job, "task-c__deadbeef");
  put(
    path.join(c, "result.json"),
    '{"task_name": "task-c", "rewards": null, "error": "agent exited 1", "error_category": "other"}',
  );
  put(path.join(c, "trajectory", "llm_trajectory.jsonl"), `${exchange({ model: "m", user: "do task c" })}\n`);
  return { jobs, job };
}

describe("jobs folders in upstream's layouts", () => {
  it("0.7.x: results without rollout_name, agent or model convert to upstream's prime-sft rows", async () => {
    const { jobs, job } = jobs07();
    const out = path.join(tmp("bf-up07-out-"), "rows.jsonl");
    const res = await convertJob({ jobs, out });
    assert.equal(res.rows, 2);
    assert.equal(res.rollouts, 3);
    assert.equal(res.manifest.skipped_terminal_error, 1);
    const [a, b] = readRows(out);
    assert.deepEqual(
      {
        task_name: a.task_name,
        source: a.source,
        source_path: a.source_path,
        exchange_index: a.exchange_index,
        reward: a.reward,
        score: a.score,
        model: a.model,
        agent: a.agent,
      },
      {
        task_name: "task-a",
        source: "benchflow-llm-trajectory",
        source_path: path.join(
          jobs,
          "2026-01-01__12-00-00",
          "task-a__1a2b3c4d",
          "trajectory",
          "llm_trajectory.jsonl",
        ),
        // The rate-limited call (line 0) is not a row: the last successful call is.
        exchange_index: 1,
        reward: 1,
        score: 1,
        // The model the agent sent in the request body, not result.json's.
        model: "deepseek-v4-flash",
        agent: "opencode",
      },
    );
    assert.deepEqual(a.messages, [
      { role: "user", content: "do task a" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "finish", arguments: "{}" } }],
      },
    ]);
    assert.equal(a.tool_defs[0].function.name, "finish");
    // task from the folder name without its suffix; the legacy top-level reward; agent_result as token_usage.
    assert.equal(b.task_name, "task-b");
    assert.equal(b.reward, 0);
    assert.equal(b.score, 0);
    assert.equal(b.agent, null);
    assert.equal(b.model, "qwen3-8b");
    assert.deepEqual(b.token_usage, JSON.parse(AGENT_RESULT_0_7));
    // What was filled in, per rollout.
    assert.deepEqual(res.manifest.inferred, [
      {
        rollout_dir: path.join(job, "task-a__1a2b3c4d"),
        inferred: { rollout_name: "folder name", model: "config.json" },
      },
      {
        rollout_dir: path.join(job, "task-b__00ff00ff"),
        inferred: { task_name: "folder name", agent: null, model: null, rewards: "reward" },
      },
      {
        rollout_dir: path.join(job, "task-c__deadbeef"),
        inferred: { rollout_name: "folder name", agent: null, model: null },
      },
    ]);
    assert.deepEqual(await validateFile(out, { requireToolCalls: true }), {
      ok: true,
      rows: 2,
      rows_with_tool_calls: 2,
    });
  });

  it("0.7.x: a rollout folder given directly converts alone, its job the folder above", async () => {
    const { job } = jobs07();
    const out = path.join(tmp("bf-up07-one-"), "rows.jsonl");
    const res = await convertJob({ jobs: path.join(job, "task-a__1a2b3c4d"), out, format: "trl-sft" });
    assert.equal(res.rows, 1);
    const [row] = readRows(out);
    assert.equal(row.task_id, "task-a");
    assert.equal(row.job, "2026-01-01__12-00-00");
    assert.deepEqual(row.prompt, [
      { role: "system", content: "You are a coding agent." },
      { role: "user", content: "do task a" },
    ]);
    assert.deepEqual(row.completion[0].tool_calls[0].function, { name: "finish", arguments: {} });
    assert.equal(row.call_purpose, "agent");
  });

  it("the run side still reads only whole results: loadJob does not fill upstream's gaps", async () => {
    const { job } = jobs07();
    const loaded = await loadJob(job);
    assert.deepEqual(
      loaded.trials.map((t) => [t.resultState, t.reward]),
      [
        ["truncated", null],
        ["truncated", null],
        ["truncated", null],
      ],
    );
  });

  it("a --trials 2 matrix (<alias>/trial-NN/<timestamp>/): one group across the repeats with grpo", async () => {
    const jobs = path.join(tmp("bf-upmatrix-"), "jobs");
    put(
      path.join(jobs, "matrix-summary.json"),
      '{"schema_version": 1, "matrix": "matrix.yaml", "trials": 2, "runs": []}',
    );
    const t1 = path.join(jobs, "haiku", "trial-01", "2026-01-01__13-00-00");
    const t2 = path.join(jobs, "haiku", "trial-02", "2026-01-01__13-05-00");
    for (const t of [t1, t2]) put(path.join(t, "summary.json"), '{"total": 1}');
    // trial-01: a result as rollout/_results.py writes it.
    const r1 = path.join(t1, "half-life__0000aaaa");
    put(
      path.join(r1, "result.json"),
      `{"task_name": "half-life", "rollout_name": "half-life__0000aaaa", "rewards": {"reward": 1.0}, "agent": "opencode", "agent_name": "opencode", "model": "deepseek/deepseek-v4-flash", "n_tool_calls": 1, "n_skill_invocations": 0, "n_prompts": 1, "agent_result": ${AGENT_RESULT_0_7}, "error": null, "error_category": null, "verifier_error": null, "verifier_error_category": null, "export_error": null, "partial_trajectory": false, "trajectory_source": "acp", "started_at": "2026-01-01 13:00:00.000000", "finished_at": "2026-01-01 13:02:00.000000", "sandbox_id": null}`,
    );
    // trial-02: the aggregate payload (evaluation_results.py) has no agent or model: config.json has them.
    const r2 = path.join(t2, "half-life__0000bbbb");
    put(
      path.join(r2, "result.json"),
      `{"task_name": "half-life", "rollout_name": "half-life__0000bbbb", "rewards": {"reward": 0.0}, "error": null, "error_category": null, "verifier_error": null, "verifier_error_category": null, "export_error": null, "n_tool_calls": 1, "n_skill_invocations": 0, "agent_result": ${AGENT_RESULT_0_7}}`,
    );
    put(
      path.join(r2, "config.json"),
      '{"task_path": "half-life", "agent": "opencode", "model": "deepseek/deepseek-v4-flash"}',
    );
    for (const r of [r1, r2])
      put(
        path.join(r, "trajectory", "llm_trajectory.jsonl"),
        `${exchange({ model: "deepseek-v4-flash", user: "half-life?" })}\n`,
      );
    const out = path.join(tmp("bf-upmatrix-out-"), "rows.jsonl");
    const res = await convertJob({ jobs, out, groupAdvantage: "grpo", groupBy: "task,agent,model" });
    assert.equal(res.rows, 2);
    const rows = readRows(out);
    // A job's id is its folder's name while the names differ (upstream.test.ts pins it).
    assert.deepEqual(
      rows.map((r) => [r.job, r.reward, Math.round(r.advantage * 100) / 100]),
      [
        ["2026-01-01__13-00-00", 1, 0.71],
        ["2026-01-01__13-05-00", 0, -0.71],
      ],
    );
    assert.equal(rows[0].group.id, "task=half-life|agent=opencode|model=deepseek/deepseek-v4-flash");
    assert.equal(rows[1].group.id, rows[0].group.id);
    // Matrix repeats are samples, never attempts of one another.
    assert.deepEqual(res.manifest.retried, []);
    assert.deepEqual(res.manifest.inferred, [
      { rollout_dir: r2, inferred: { agent: "config.json", model: "config.json" } },
    ]);
  });

  it("0.8+: evaluation.json, a lock, groups/ and rollout_group attempts <task>__<group>-rNN-aK", async () => {
    const job = path.join(tmp("bf-up08-"), "jobs", "rl", "2026-02-01__09-00-00");
    put(
      path.join(job, "evaluation.json"),
      '{"tasks_dir": "tasks/sql-4", "config": {"agent": "opencode", "agent_env": ["POLICY_KEY"]}}',
    );
    put(path.join(job, ".evaluation.lock"), '{"pid": 2147483646, "host": "trainer-1"}');
    put(
      path.join(job, "groups", "step0.json"),
      '{"group_id": "step0", "rollouts": [], "zero_variance": false, "dropped": null}',
    );
    put(path.join(job, "results.jsonl"), "");
    const attempt = (name: string, result: string, calls: string[]) => {
      const dir = path.join(job, name);
      put(path.join(dir, "result.json"), result);
      put(path.join(dir, "trajectory", "llm_trajectory.jsonl"), calls.map((c) => `${c}\n`).join(""));
      put(path.join(dir, "trajectory", "policy_relay.jsonl"), "");
      put(
        path.join(dir, "results.jsonl"),
        `${JSON.stringify({ info: { schema_version: 2, source: "benchflow", task_name: "sql-4", rollout_name: name }, reward: null })}\n`,
      );
      return dir;
    };
    const base =
      '"task_name": "sql-4", "agent": "opencode", "agent_name": "opencode", "model": "vllm/my-policy"';
    // Member 0's first attempt was masked (the sandbox did not start) and retried as a2.
    attempt(
      "sql-4__step0-r00-a1",
      `{${base}, "rollout_name": "sql-4__step0-r00-a1", "rewards": null, "error": "sandbox did not start", "error_category": "sandbox_setup"}`,
      [],
    );
    attempt(
      "sql-4__step0-r00-a2",
      `{${base}, "rollout_name": "sql-4__step0-r00-a2", "rewards": {"reward": 1.0}, "error": null}`,
      [exchange({ model: "my-policy", user: "query", answer: "SELECT 1;" })],
    );
    attempt(
      "sql-4__step0-r01-a1",
      `{${base}, "rollout_name": "sql-4__step0-r01-a1", "rewards": {"reward": 0.0}, "error": null}`,
      [exchange({ model: "my-policy", user: "query", answer: "SELECT 2;" })],
    );
    const out = path.join(tmp("bf-up08-out-"), "rows.jsonl");
    const res = await convertJob({ jobs: path.dirname(job), out, groupAdvantage: "grpo" });
    // Two members, each one final attempt: a group of two, not one rollout of three attempts.
    assert.equal(res.rows, 2);
    assert.deepEqual(
      res.manifest.retried.map((r) => [r.rollout, r.replaced_by]),
      [["sql-4__step0-r00-a1", "sql-4__step0-r00-a2"]],
    );
    const rows = readRows(out);
    assert.deepEqual(
      rows.map((r) => [r.rollout, r.reward, Math.round(r.advantage * 100) / 100]),
      [
        ["sql-4__step0-r00-a2", 1, 0.71],
        ["sql-4__step0-r01-a1", 0, -0.71],
      ],
    );
    assert.equal(rows[0].group.id, "task=sql-4|agent=opencode|model=vllm/my-policy|job=2026-02-01__09-00-00");
    assert.deepEqual(rows[0].messages, [
      { role: "user", content: "query" },
      { role: "assistant", content: "SELECT 1;" },
    ]);
    assert.equal(rows[0].model, "my-policy");
    assert.deepEqual(res.manifest.inferred, []);
    // The stream reads the same folders the same way. The lock names another host, so the job reads
    // as still running: the group closes at its size.
    const records: Array<[string, boolean, number | null]> = [];
    for await (const r of streamRollouts(path.dirname(job), {
      follow: false,
      groupAdvantage: "grpo",
      groupSize: 2,
    }))
      records.push([r.rollout, r.retried, r.advantage === null ? null : Math.round(r.advantage * 100) / 100]);
    assert.deepEqual(records.sort(), [
      ["sql-4__step0-r00-a1", true, null],
      ["sql-4__step0-r00-a2", false, 0.71],
      ["sql-4__step0-r01-a1", false, -0.71],
    ]);
  });
});
