// `bench train convert FILE.jsonl`: the rows of upstream's own tests (test_train_cli.py,
// test_train_trl_cli.py), written here by hand: a results.jsonl in prime-sft and trl-sft, legacy
// tool-call ids repaired, an existing trl-sft file normalised, and what a JSONL source cannot do.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../../../cli/testing/run-cli.js";
import { tmp } from "../../../jobs-dir/testing/tmp.js";
import { READ_TOOL, twoReadTurns, writeTinyTokenizer } from "../../testing/tiny-tokenizer.js";
import { validateFile } from "../../validate/validate.js";
import { convertJob } from "../convert.js";

const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));

function bench(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, ...args], { cwd, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const tool = (name: string) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: {} } },
});
const toolCall = (id: string, name: string) => ({
  id,
  type: "function",
  function: { name, arguments: "{}" },
});

function source(rows: unknown[], name = "results.jsonl"): { dir: string; file: string } {
  const dir = tmp("bf-jsonl-in-");
  const file = path.join(dir, name);
  fs.writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return { dir, file };
}

const rowsOf = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

// test_train_convert_accepts_results_jsonl_cli
const RESULTS_ROW = {
  prompt: [{ role: "user", content: "do it" }],
  completion: [{ role: "assistant", content: "", tool_calls: [toolCall("call_1", "finish")] }],
  tool_defs: [tool("finish")],
  reward: 1.0,
};

describe("convert from a results.jsonl or a trainer JSONL", () => {
  it("a results.jsonl row becomes one prime-sft row that validates", async () => {
    const { dir, file } = source([RESULTS_ROW]);
    const out = path.join(dir, "prime-sft.jsonl");
    const res = await convertJob({ jobs: file, out, expectedRows: 1 });
    assert.deepEqual([res.rows, res.rollouts], [1, 1]);
    const [row] = rowsOf(out);
    assert.deepEqual(row, {
      messages: [...RESULTS_ROW.prompt, ...RESULTS_ROW.completion],
      tool_defs: RESULTS_ROW.tool_defs,
      reward: 1,
      source_path: file,
      source_index: 0,
      source_format: "benchflow-results-jsonl",
    });
    assert.deepEqual(await validateFile(out, { expectedRows: 1 }), {
      ok: true,
      rows: 1,
      rows_with_tool_calls: 1,
    });
  });

  it("legacy results rows: the assistant's fc_ id takes the tool output's call_ id, counted in the manifest", async () => {
    // test_train_convert_repairs_legacy_results_tool_call_ids
    const { dir, file } = source([
      {
        prompt: [{ role: "user", content: "Inspect the app." }],
        completion: [
          { role: "assistant", content: "", tool_calls: [toolCall("fc_legacy_1", "terminal")] },
          { role: "tool", tool_call_id: "call_runtime_1", content: "ok" },
        ],
        tool_defs: [tool("terminal")],
        reward: 1.0,
      },
    ]);
    const out = path.join(dir, "prime-sft.jsonl");
    const manifest = path.join(dir, "manifest.json");
    await convertJob({ jobs: file, out, manifest, expectedRows: 1 });
    const [row] = rowsOf(out);
    assert.equal("trajectory" in row, false);
    assert.equal(row.messages[1].tool_calls[0].id, "call_runtime_1");
    const m = JSON.parse(fs.readFileSync(manifest, "utf8"));
    assert.equal(m.tool_call_ids_rewritten, 1);
    assert.deepEqual(m.sources, [file]);
    assert.equal((await validateFile(out, { expectedRows: 1 })).ok, true);
  });

  it("tool-call arguments: a valid string is kept as written, a malformed one is wrapped so the row still validates", async () => {
    // test_train_convert_sanitizes_malformed_tool_call_arguments, test_..._preserves_tool_argument_tokens
    const raw = JSON.stringify({ command: "ls -la", summary: "list" }).replace(",", ", ");
    const malformed = `{"command":"python - <<'PY'\nunterminated`;
    const call = (args: string) => ({
      ...RESULTS_ROW,
      completion: [
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "finish", arguments: args } }],
        },
      ],
    });
    const { dir, file } = source([call(raw), call(malformed)]);
    const out = path.join(dir, "rows.jsonl");
    await convertJob({ jobs: file, out, expectedRows: 2 });
    const args = rowsOf(out).map((r) => r.messages[1].tool_calls[0].function.arguments);
    assert.equal(args[0], raw);
    assert.deepEqual(JSON.parse(args[1]), { _malformed_json_arguments: malformed });
    assert.equal((await validateFile(out, { expectedRows: 2 })).ok, true);
  });

  it("a BenchFlow results row trains on its last user turn; one not training-ready, errored or cut short gives no row", async () => {
    const whole = {
      example_id: 3,
      prompt: [
        { role: "system", content: "You are OpenCode." },
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "now finish" },
      ],
      completion: [{ role: "assistant", content: "", tool_calls: [toolCall("call_9", "finish")] }],
      info: {
        schema_version: 2,
        source: "benchflow",
        task_id: "task-a",
        task_name: "task-a",
        agent: "opencode",
        model: "vendor/m",
        rollout_dir: "jobs/run/task-a__abc123",
        training_ready: true,
      },
      reward: 1.0,
      score: 1.0,
      tool_defs: [tool("finish")],
      is_completed: true,
      is_truncated: false,
      stop_condition: "agent_completed",
      trajectory: [],
    };
    const { dir, file } = source([
      whole,
      { ...whole, info: { ...whole.info, training_ready: false } },
      { ...whole, error: "agent exited 1" },
      { ...whole, is_truncated: true },
      // schema_version 2: an unscored rollout's reward is null, never 0.
      { ...whole, reward: null, score: null },
    ]);
    const out = path.join(dir, "rows.jsonl");
    const res = await convertJob({ jobs: file, out, minReward: 0.5 });
    assert.deepEqual([res.rows, res.rollouts], [1, 5]);
    assert.equal(res.manifest.skipped_terminal_error, 3);
    assert.equal(res.manifest.skipped_reward, 1);
    const [row] = rowsOf(out);
    assert.deepEqual(
      row.messages.map((m: { role: string }) => m.role),
      ["user", "assistant"],
    );
    assert.equal(row.messages[0].content, "now finish");
    assert.deepEqual(
      [row.task_id, row.task_name, row.agent, row.model, row.source_example_id, row.source_rollout_dir],
      ["task-a", "task-a", "opencode", "vendor/m", 3, "jobs/run/task-a__abc123"],
    );
  });

  it("trl-sft from results.jsonl trajectory steps: the agent's calls, not the title call", async () => {
    // test_trl_sft_cli_accepts_results_jsonl_trajectory_steps
    const { dir, file } = source([
      {
        info: {
          source: "benchflow",
          training_ready: true,
          task_id: "task-a",
          agent: "opencode",
          model: "m",
          rollout_dir: "/tmp/task-a__abc123",
        },
        reward: 1.0,
        tool_defs: [tool("finish")],
        trajectory: [
          {
            prompt: [
              { role: "system", content: "You are OpenCode." },
              { role: "user", content: "do it" },
            ],
            completion: [{ role: "assistant", content: "", tool_calls: [toolCall("call_1", "finish")] }],
            extras: { exchange_index: 0, call_purpose: "agent" },
          },
          {
            prompt: [{ role: "system", content: "You are a title generator." }],
            completion: [{ role: "assistant", content: "Task title" }],
            extras: { exchange_index: 1, call_purpose: "title" },
          },
        ],
      },
    ]);
    const out = path.join(dir, "trl-sft.jsonl");
    const res = await convertJob({
      jobs: file,
      out,
      format: "trl-sft",
      rowMode: "exchange",
      expectedRows: 1,
    });
    assert.equal(res.manifest.skipped_helper_calls, 1);
    const [row] = rowsOf(out);
    assert.equal(row.prompt[0].role, "system");
    assert.deepEqual(row.tools, [tool("finish")]);
    assert.deepEqual(row.completion[0].tool_calls[0].function, { name: "finish", arguments: {} });
    assert.deepEqual(
      [row.task_id, row.agent, row.model, row.exchange_index, row.call_purpose, row.source_rollout_dir],
      ["task-a", "opencode", "m", 0, "agent", "/tmp/task-a__abc123"],
    );
    assert.equal(row.source, "benchflow-results-jsonl");
    assert.equal(row.source_format, "benchflow-results-jsonl");
    assert.equal((await validateFile(out, { format: "trl-sft", expectedRows: 1 })).ok, true);
  });

  it("an existing trl-sft file is normalised: arguments become objects, the row is kept whole", async () => {
    // test_trl_sft_cli_accepts_existing_native_jsonl
    const native = {
      prompt: [{ role: "user", content: "do it" }],
      completion: [{ role: "assistant", content: "", tool_calls: [toolCall("call_1", "finish")] }],
      tools: [tool("finish")],
      reward: 1.0,
      task_id: "task-a",
    };
    const { dir, file } = source([native], "source.jsonl");
    const out = path.join(dir, "normalized.jsonl");
    await convertJob({ jobs: file, out, format: "trl-sft", expectedRows: 1 });
    const [row] = rowsOf(out);
    assert.deepEqual(row.completion[0].tool_calls[0].function.arguments, {});
    assert.equal(row.source_format, "trl-sft");
    assert.equal(row.task_id, "task-a");
    assert.equal(row.source_index, 0);
  });

  it("a JSONL source refuses what needs rollout folders, and --out over the source", async () => {
    const { dir, file } = source([RESULTS_ROW]);
    const out = path.join(dir, "rows.jsonl");
    await assert.rejects(
      convertJob({ jobs: file, out, groupAdvantage: "grpo" }),
      /needs a rollout or jobs directory/,
    );
    await assert.rejects(
      convertJob({ jobs: file, out, format: "tokens" }),
      /needs a rollout or jobs directory/,
    );
    await assert.rejects(
      convertJob({ jobs: file, out: file }),
      /^UserInputError: out must differ from the source JSONL/,
    );
    assert.equal(fs.existsSync(out), false);
    // From the command line: a usage error, exit 2; the source is untouched.
    const r = bench(dir, "convert", "results.jsonl", "--out", "rows.jsonl", "--group-advantage", "grpo");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--group-advantage needs a rollout or jobs directory/);
    assert.deepEqual(rowsOf(file), [RESULTS_ROW]);
  });

  it("a row that is not a valid conversation stops the conversion, naming the file and line; nothing is written", () => {
    const { dir } = source([
      RESULTS_ROW,
      {
        prompt: [{ role: "user", content: "x" }],
        completion: [{ role: "tool", tool_call_id: "nope", content: "" }],
      },
    ]);
    const r = bench(dir, "convert", "results.jsonl", "--out", "rows.jsonl");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /results\.jsonl line 2: .*nope/);
    assert.equal(fs.existsSync(path.join(dir, "rows.jsonl")), false);
    const bad = source([RESULTS_ROW]);
    fs.appendFileSync(bad.file, "{not json\n");
    const b = bench(bad.dir, "convert", "results.jsonl", "--out", "rows.jsonl");
    assert.equal(b.code, 1);
    assert.match(b.stderr, /results\.jsonl line 2: not valid JSON/);
  });

  // Secrets built at run time, so no scanner takes this file for a leak.
  const GHP = `ghp_${"16C7e42F292c6912E7710c838347Ae178B4abcde"}`;
  const AWS = `AKIA${"IOSFODNN7EXAMPLE"}`;
  const secretRow = () => ({
    ...RESULTS_ROW,
    prompt: [{ role: "user", content: `The bucket key is ${AWS}.` }],
    completion: [
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: {
              name: "finish",
              arguments: JSON.stringify({ command: `export GITHUB_TOKEN=${GHP} && git push` }),
            },
          },
        ],
      },
    ],
  });

  it("a secret in a results.jsonl message and tool argument is redacted by default, and counted", async () => {
    // test_train_convert_no_redact_preserves_tool_argument_tokens feeds a results.jsonl: upstream
    // redacts these rows as it does a rollout's.
    const { dir, file } = source([secretRow()]);
    const out = path.join(dir, "rows.jsonl");
    const res = await convertJob({ jobs: file, out, expectedRows: 1 });
    const text = fs.readFileSync(out, "utf8");
    assert.equal(text.includes(GHP) || text.includes(AWS), false);
    const [row] = rowsOf(out);
    assert.equal(row.messages[0].content, "The bucket key is ***REDACTED***.");
    assert.deepEqual(JSON.parse(row.messages[1].tool_calls[0].function.arguments), {
      command: "export GITHUB_TOKEN=***REDACTED*** && git push",
    });
    assert.deepEqual([res.manifest.redact, res.manifest.rows_redacted], [true, 1]);
    assert.equal(res.manifest.secrets_redacted, 2);
    assert.equal((await validateFile(out, { expectedRows: 1 })).ok, true);
  });

  it("--no-redact keeps a results.jsonl row's secrets and its argument string byte for byte", () => {
    const { dir, file } = source([secretRow()]);
    const r = bench(dir, "convert", "results.jsonl", "--out", "rows.jsonl", "--no-redact");
    assert.equal(r.code, 0, r.stderr);
    const [row] = rowsOf(path.join(dir, "rows.jsonl"));
    const [src] = rowsOf(file);
    assert.equal(row.messages[0].content, `The bucket key is ${AWS}.`);
    assert.equal(
      row.messages[1].tool_calls[0].function.arguments,
      src.completion[0].tool_calls[0].function.arguments,
    );
  });

  it("trl-sft rows from a results.jsonl are redacted too, with arguments as objects", async () => {
    const step = secretRow();
    const { dir, file } = source([
      { info: { source: "benchflow" }, reward: 1.0, tool_defs: step.tool_defs, trajectory: [step] },
    ]);
    const out = path.join(dir, "trl.jsonl");
    const res = await convertJob({ jobs: file, out, format: "trl-sft", expectedRows: 1 });
    const [row] = rowsOf(out);
    assert.equal(row.prompt[0].content, "The bucket key is ***REDACTED***.");
    assert.deepEqual(row.completion[0].tool_calls[0].function.arguments, {
      command: "export GITHUB_TOKEN=***REDACTED*** && git push",
    });
    assert.equal(res.manifest.rows_redacted, 1);
    // A trl-sft manifest carries the window totals, zeros with --context-policy full.
    assert.deepEqual([res.manifest.rows_compacted, res.manifest.messages_dropped], [0, 0]);
  });

  it("--context-policy message-window windows trl-sft rows from a JSONL file as it does a rollout's", async () => {
    const { dir, file } = source([], "trl-source.jsonl");
    writeTinyTokenizer(path.join(dir, "tok"));
    const native = (recent: string) => ({
      prompt: twoReadTurns(recent),
      completion: [{ role: "assistant", content: "done" }],
      tools: [READ_TOOL],
      reward: 1.0,
    });
    fs.writeFileSync(file, `${JSON.stringify(native("recent"))}\n`);
    const window = {
      format: "trl-sft" as const,
      contextPolicy: "message-window" as const,
      tokenizer: path.join(dir, "tok"),
      maxLength: 160,
    };
    const out = path.join(dir, "w.jsonl");
    const res = await convertJob({ jobs: file, out, ...window, expectedRows: 1 });
    const [row] = rowsOf(out);
    assert.deepEqual(
      row.prompt.map((m: { role: string }) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(row.prompt[3].tool_call_id, "call_recent");
    // The counts tiny-tokenizer.ts works out for this conversation: 176 tokens whole, 113 windowed.
    assert.deepEqual(
      [
        row.context_window.messages_dropped,
        row.context_window.original_tokens,
        row.context_window.final_tokens,
      ],
      [2, 176, 113],
    );
    assert.deepEqual([res.manifest.rows_compacted, res.manifest.messages_dropped], [1, 2]);
    // A row whose recent turn cannot fit stops the conversion, naming the line; nothing is written.
    fs.writeFileSync(
      file,
      `${JSON.stringify(native("recent"))}\n${JSON.stringify(native("x".repeat(40)))}\n`,
    );
    const never = path.join(dir, "never.jsonl");
    await assert.rejects(
      convertJob({ jobs: file, out: never, ...window, maxLength: 120 }),
      /trl-source\.jsonl line 2: most recent assistant\/tool context group does not fit max_length 120/,
    );
    assert.equal(fs.existsSync(never), false);
  });

  it("--reward-vector, --subagent-rows and --canonical-selection need rollout folders: refused, exit 2", async () => {
    const { dir, file } = source([RESULTS_ROW]);
    const out = path.join(dir, "rows.jsonl");
    await assert.rejects(
      convertJob({ jobs: file, out, rewardVector: true }),
      /^UserInputError: rewardVector needs a rollout or jobs directory/,
    );
    await assert.rejects(
      convertJob({ jobs: file, out, subagentRows: true }),
      /^UserInputError: subagentRows needs a rollout or jobs directory/,
    );
    await assert.rejects(
      convertJob({ jobs: file, out, canonicalSelection: path.join(dir, "selection.json") }),
      /^UserInputError: canonicalSelection needs a rollout or jobs directory/,
    );
    assert.equal(fs.existsSync(out), false);
    const r = bench(dir, "convert", "results.jsonl", "--out", "rows.jsonl", "--reward-vector");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--reward-vector needs a rollout or jobs directory/);
  });

  it("tool outputs are repaired as a rollout's: fragments merged, legacy ids rewritten, each counted", async () => {
    const legacy = {
      ...RESULTS_ROW,
      completion: [
        { role: "assistant", content: "", tool_calls: [toolCall("fc_legacy_1", "finish")] },
        { role: "tool", tool_call_id: "call_runtime_1", content: "ok" },
      ],
    };
    const fragments = {
      ...RESULTS_ROW,
      completion: [
        { role: "assistant", content: "", tool_calls: [toolCall("call_1", "finish")] },
        { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "README.md" }] },
        { role: "tool", tool_call_id: "call_1", content: "pyproject.toml" },
        { role: "assistant", content: "Done." },
      ],
    };
    // Upstream counts the repairs of every line it reads, one it then leaves out too.
    const { dir, file } = source([legacy, fragments, { ...legacy, reward: 0.0 }]);
    const out = path.join(dir, "rows.jsonl");
    const res = await convertJob({ jobs: file, out, minReward: 0.5, expectedRows: 2 });
    assert.deepEqual([res.manifest.tool_call_ids_rewritten, res.manifest.tool_messages_merged], [2, 1]);
    assert.equal(res.manifest.skipped_reward, 1);
    const [first, second] = rowsOf(out);
    assert.equal(first.messages[1].tool_calls[0].id, "call_runtime_1");
    assert.deepEqual(
      second.messages.filter((m: { role: string }) => m.role === "tool"),
      [{ role: "tool", tool_call_id: "call_1", content: "README.md\npyproject.toml" }],
    );
    assert.equal((await validateFile(out, { expectedRows: 2 })).ok, true);
  });
});
