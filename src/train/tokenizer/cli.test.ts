// The tokenizer flags of `bench train convert | validate` and `bench train token-coverage`, driven
// as a user types them, on jobs written in upstream's documented llm_trajectory.jsonl shape.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../../cli/testing/run-cli.js";
import { writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { READ_TOOL, twoReadTurns, writeTinyTokenizer } from "../testing/tiny-tokenizer.js";

const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));
// Made at load time: tmp()'s clean-up hook, registered inside a before() hook, would run as that hook ends.
const root = tmp("bf-tokenizer-cli-");
writeTinyTokenizer(path.join(root, "tok"));

function bench(...args: string[]) {
  const env = { ...process.env, HF_HOME: path.join(root, "hf"), HF_HUB_CACHE: "", XDG_CACHE_HOME: root };
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, ...args], {
    cwd: root,
    encoding: "utf8",
    env,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One agent call of upstream's shape: the conversation so far, and the assistant's answer. */
function exchange(recentResult: string) {
  return {
    request: {
      body: {
        model: "m",
        messages: twoReadTurns(recentResult),
        tools: [READ_TOOL],
      },
    },
    response: { status_code: 200, body: { choices: [{ message: { role: "assistant", content: "done" } }] } },
    duration_ms: 1,
  };
}

function jobWith(name: string, recentResult: string): string {
  const dir = path.join(root, "jobs", name);
  const [r] = writeJob({ dir, agent: "opencode", rollouts: [{ task: "task-a", calls: 0, hex: "00000001" }] });
  const line = `${JSON.stringify(exchange(recentResult))}\n`;
  fs.writeFileSync(path.join(r?.dir as string, "trajectory", "llm_trajectory.jsonl"), line);
  return path.join("jobs", name);
}

describe("bench train convert --context-policy message-window", () => {
  it("keeps the prefix and the complete recent tool turn, and counts it in the row and the manifest", () => {
    const jobs = jobWith("fits", "recent");
    const r = bench(
      "convert",
      jobs,
      "--format",
      "trl-sft",
      "--out",
      "out/w.jsonl",
      "--manifest",
      "out/m.json",
      "--context-policy",
      "message-window",
      "--tokenizer",
      "tok",
      "--max-length",
      "160",
    );
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(fs.readFileSync(path.join(root, "out", "w.jsonl"), "utf8"));
    assert.deepEqual(
      row.prompt.map((m: { role: string }) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(row.prompt[3].tool_call_id, "call_recent");
    // Our template's count (see tiny-tokenizer.ts): 176 tokens whole, 113 without the old turn.
    assert.equal(row.context_window.messages_dropped, 2);
    assert.equal(row.context_window.original_tokens, 176);
    assert.equal(row.context_window.final_tokens, 113);
    assert.equal(row.context_window.tokenizer, "tok");
    const m = JSON.parse(fs.readFileSync(path.join(root, "out", "m.json"), "utf8"));
    assert.equal(m.rows_compacted, 1);
    assert.equal(m.messages_dropped, 2);
    assert.equal(m.max_original_tokens, 176);
    assert.equal(m.max_final_tokens, 113);
  });

  it("fails (exit 1), writing nothing, when the most recent tool turn cannot fit", () => {
    const jobs = jobWith("too-long", "x".repeat(40));
    const r = bench(
      "convert",
      jobs,
      "--format",
      "trl-sft",
      "--out",
      "out/never.jsonl",
      "--context-policy",
      "message-window",
      "--tokenizer",
      "tok",
      "--max-length",
      "120",
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /most recent assistant\/tool context group does not fit max_length 120/);
    assert.match(r.stderr, /too-long\/task-a__00000001\/trajectory\/llm_trajectory\.jsonl exchange 0/);
    assert.equal(fs.existsSync(path.join(root, "out", "never.jsonl")), false);
  });

  it("refuses the tokenizer flags where upstream does (exit 2)", () => {
    const jobs = jobWith("flags", "recent");
    const cases: Array<[string[], RegExp]> = [
      [["--tokenizer", "tok"], /supported only with --format trl-sft/],
      [["--format", "trl-sft", "--max-length", "10"], /require --context-policy message-window/],
      [
        ["--format", "trl-sft", "--context-policy", "message-window", "--tokenizer", "tok"],
        /requires --tokenizer and --max-length/,
      ],
      [
        [
          "--format",
          "trl-sft",
          "--context-policy",
          "message-window",
          "--tokenizer",
          "tok",
          "--max-length",
          "0",
        ],
        /--max-length/,
      ],
    ];
    for (const [flags, message] of cases) {
      const r = bench("convert", jobs, "--out", "out/f.jsonl", ...flags);
      assert.equal(r.code, 2, `${flags.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });

  it("names the download command when a model id is not in the cache", () => {
    const jobs = jobWith("absent", "recent");
    const r = bench(
      "convert",
      jobs,
      "--format",
      "trl-sft",
      "--out",
      "out/a.jsonl",
      "--context-policy",
      "message-window",
      "--tokenizer",
      "acme/absent",
      "--max-length",
      "100",
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /huggingface-cli download acme\/absent tokenizer\.json tokenizer_config\.json/);
    assert.ok(r.stderr.includes(path.join(root, "hf", "hub")), r.stderr);
  });
});

describe("bench train validate --tokenizer", () => {
  it("reports the tokenization block, and fails a row longer than --max-length", () => {
    const file = path.join(root, "trl.jsonl");
    const row = {
      prompt: [{ role: "user", content: "do it" }],
      completion: [{ role: "assistant", content: "done" }],
      tools: [],
    };
    fs.writeFileSync(file, `${JSON.stringify(row)}\n`);
    const ok = bench(
      "validate",
      "trl.jsonl",
      "--format",
      "trl-sft",
      "--tokenizer",
      "tok",
      "--max-length",
      "40",
    );
    assert.equal(ok.code, 0, ok.stderr);
    const report = JSON.parse(ok.stdout);
    // "<|im_start|>user\ndo it<|im_end|>\n" 13 tokens, the completion 17, of which 6 after the generation prompt.
    assert.deepEqual(report.tokenization, {
      tokenizer: "tok",
      tokenizer_revision: null,
      max_length: 40,
      min_tokens: 30,
      median_tokens: 30,
      p95_tokens: 30,
      max_tokens: 30,
      min_trainable_assistant_tokens: 6,
    });
    const long = bench(
      "validate",
      "trl.jsonl",
      "--format",
      "trl-sft",
      "--tokenizer",
      "tok",
      "--max-length",
      "8",
    );
    assert.equal(long.code, 1);
    assert.match(long.stderr, /trl\.jsonl line 1: tokenized length 30 exceeds max_length 8/);
    const prime = bench("validate", "trl.jsonl", "--tokenizer", "tok");
    assert.equal(prime.code, 2);
    assert.match(prime.stderr, /supported only with --format trl-sft/);
  });
});

describe("bench train token-coverage", () => {
  it("gives each rollout's capture and the totals, as lines or as JSON", () => {
    const dir = path.join(root, "jobs", "cov");
    writeJob({
      dir,
      rollouts: [
        { task: "ta", hex: "0000000a", tokens: true, calls: 3 },
        { task: "tb", hex: "0000000b", tokens: false, calls: 2 },
        { task: "tc", hex: "0000000c", tokens: "broken", calls: 2 },
      ],
    });
    const json = bench("token-coverage", "jobs/cov", "--json");
    assert.equal(json.code, 0, json.stderr);
    const c = JSON.parse(json.stdout);
    assert.equal(c.rollouts, 3);
    assert.equal(c.training_grade_rollouts, 1);
    assert.equal(c.captured_rollouts, 2);
    assert.equal(c.calls, 7);
    assert.equal(c.captured_calls, 5);
    const byName = Object.fromEntries(c.per_rollout.map((r: { rollout: string }) => [r.rollout, r]));
    assert.equal(byName.ta__0000000a.status, "captured");
    assert.equal(byName.ta__0000000a.training_grade, true);
    assert.equal(byName.tb__0000000b.status, "capture_off");
    assert.match(byName.tc__0000000c.reason, /does not begin with/);
    const text = bench("token-coverage", "jobs/cov");
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trim().split("\n");
    assert.equal(lines.length, 4);
    assert.match(
      lines[0] as string,
      /ta__0000000a: captured, training-grade; 3\/3 call\(s\) captured, 3 complete$/,
    );
    assert.match(
      lines[3] as string,
      /^1 of 3 rollout\(s\) training-grade, 2 with captured tokens; 5 of 7 call\(s\)/,
    );
  });
});

describe("upstream's message-window and validate scenarios, with its test tokenizer's counts", () => {
  // Upstream's tests count 1 token a tool, 1 before each assistant message, 1 a content character (at
  // least 1), and 1 for the generation prompt. The same counts as a chat template over our byte-level
  // tokenizer: "T" a tool, <|im_start|> the assistant marker, "_" an empty content.
  const template =
    "{%- if tools %}{% for t in tools %}T{% endfor %}{% endif -%}" +
    "{%- for m in messages -%}{% if m.role == 'assistant' %}<|im_start|>{% endif %}" +
    "{% if m.content %}{{ m.content }}{% else %}_{% endif %}{%- endfor -%}" +
    "{%- if add_generation_prompt %}<|im_start|>{% endif -%}";
  writeTinyTokenizer(path.join(root, "upstream-tok"), { template });

  it("keeps the complete recent tool turn: 21 tokens of 24, two messages dropped", () => {
    const jobs = jobWith("upstream-keeps", "recent");
    const r = bench(
      "convert",
      jobs,
      "--format",
      "trl-sft",
      "--out",
      "out/u.jsonl",
      "--manifest",
      "out/u.json",
      "--context-policy",
      "message-window",
      "--tokenizer",
      "upstream-tok",
      "--max-length",
      "24",
    );
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(fs.readFileSync(path.join(root, "out", "u.jsonl"), "utf8"));
    assert.deepEqual(
      row.prompt.map((m: { role: string }) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(row.prompt.at(-1).tool_call_id, "call_recent");
    assert.equal(row.context_window.messages_dropped, 2);
    assert.equal(row.context_window.final_tokens, 21);
    const m = JSON.parse(fs.readFileSync(path.join(root, "out", "u.json"), "utf8"));
    assert.equal(m.rows_compacted, 1);
    assert.equal(m.messages_dropped, 2);
  });

  it("rejects an unusable recent tool context (max 20)", () => {
    const jobs = jobWith("upstream-rejects", "x".repeat(40));
    const r = bench(
      "convert",
      jobs,
      "--format",
      "trl-sft",
      "--out",
      "out/ur.jsonl",
      "--context-policy",
      "message-window",
      "--tokenizer",
      "upstream-tok",
      "--max-length",
      "20",
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /most recent assistant\/tool context group does not fit/);
  });

  it("validate: 4 trainable tokens; a 10-token row fails max_length 8", () => {
    fs.writeFileSync(
      path.join(root, "u-trl.jsonl"),
      `${JSON.stringify({ prompt: [{ role: "user", content: "do it" }], completion: [{ role: "assistant", content: "done" }], tools: [] })}\n`,
    );
    const ok = bench(
      "validate",
      "u-trl.jsonl",
      "--format",
      "trl-sft",
      "--tokenizer",
      "upstream-tok",
      "--max-length",
      "20",
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).tokenization.min_trainable_assistant_tokens, 4);
    const long = bench(
      "validate",
      "u-trl.jsonl",
      "--format",
      "trl-sft",
      "--tokenizer",
      "upstream-tok",
      "--max-length",
      "8",
    );
    assert.equal(long.code, 1);
    assert.match(long.stderr, /tokenized length 10 exceeds max_length 8/);
  });
});
