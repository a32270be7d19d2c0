// `bench train run sft` as its own process, with a stand-in `uv` first on PATH: a shell script
// that records the arguments, working directory and environment it was started with, prints to
// both streams and exits with $STAND_IN_EXIT (or sleeps $STAND_IN_SLEEP seconds). The expectations are upstream's
// (tests/test_train_cli.py test_train_run_sft_*), where its Popen was faked the same way.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TRAIN_CLI } from "../../cli/testing/run-cli.js";
import { TrainRunManifest } from "../../schemas/train-run.js";

const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));

const STAND_IN = `#!/bin/sh
for a in "$@"; do printf '%s\\n' "$a"; done > "$STAND_IN_RECORD.argv"
pwd > "$STAND_IN_RECORD.cwd"
env > "$STAND_IN_RECORD.env"
echo "trainer ok"
echo "trainer warning" >&2
if [ -n "$STAND_IN_SLEEP" ]; then exec sleep "$STAND_IN_SLEEP"; fi
exit "\${STAND_IN_EXIT:-0}"
`;

const ROW = {
  messages: [
    { role: "user", content: "do it" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "finish", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "call_1", content: "ok" },
    { role: "assistant", content: "done" },
  ],
  tool_defs: [
    { type: "function", function: { name: "finish", parameters: { type: "object", properties: {} } } },
  ],
};

let root = "";
let bin = "";
let n = 0;

/** A fresh case folder: the config, a record prefix, a work dir. */
function fresh(config = "max_steps = 1\n") {
  const dir = fs.mkdtempSync(path.join(root, `case-${++n}-`));
  fs.writeFileSync(path.join(dir, "sft.toml"), config);
  return {
    dir,
    config: path.join(dir, "sft.toml"),
    work: path.join(dir, "train-run"),
    rec: path.join(dir, "rec"),
  };
}

function bench(
  c: { dir: string; rec: string },
  args: string[],
  env: Record<string, string> = {},
  withUv = true,
) {
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, "run", "sft", ...args], {
    cwd: c.dir,
    encoding: "utf8",
    env: {
      PATH: withUv ? `${bin}:/usr/bin:/bin` : "/usr/bin:/bin",
      HOME: os.tmpdir(),
      STAND_IN_RECORD: c.rec,
      ...env,
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const argvOf = (rec: string) => fs.readFileSync(`${rec}.argv`, "utf8").split("\n").slice(0, -1);
/** train-run.json, checked against its schema (strict: no field more, none missing). */
const manifestOf = (work: string) => {
  const m = JSON.parse(fs.readFileSync(path.join(work, "train-run.json"), "utf8"));
  TrainRunManifest.parse(m);
  return m;
};

before(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bf-run-sft-")));
  bin = path.join(root, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, "uv"), STAND_IN, { mode: 0o755 });
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe("bench train run sft --backend prime-rl", () => {
  it("runs uv in the checkout with upstream's argv and records the launch", () => {
    const c = fresh();
    const checkout = path.join(c.dir, "prime-rl-checkout");
    fs.mkdirSync(checkout);
    const out = path.join(c.dir, "prime-output");
    const r = bench(c, [
      "--backend",
      "prime-rl",
      "--config",
      c.config,
      "--data",
      "benchflow/env0-prime-sft",
      "--output-dir",
      out,
      "--work-dir",
      c.work,
      "--prime-rl-dir",
      checkout,
      "--dry-run",
      "--uv-no-sync",
      "--override",
      "model.name=Qwen/Qwen3.5-9B",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Prime-RL SFT completed (manifest: ${path.join(c.work, "train-run.json")})\n`);
    const argv = [
      "run",
      "--no-sync",
      "sft",
      "@",
      c.config,
      "--data.name",
      "benchflow/env0-prime-sft",
      "--output-dir",
      out,
      "--dry-run",
      "--model.name",
      "Qwen/Qwen3.5-9B",
    ];
    assert.deepEqual(argvOf(c.rec), argv);
    assert.equal(fs.readFileSync(`${c.rec}.cwd`, "utf8").trim(), checkout);
    const m = manifestOf(c.work);
    assert.equal(m.schema_version, 1);
    assert.equal(m.overall_status, "succeeded");
    assert.equal(m.run_type, "sft");
    assert.equal(m.backend, "prime-rl");
    assert.equal(m.config, c.config);
    assert.equal(m.work_dir, c.work);
    assert.equal(m.output_dir, out);
    assert.equal(m.dry_run, true);
    assert.match(m.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    assert.deepEqual(m.commands, [
      { id: "prime-rl-sft", argv: ["uv", ...argv], cwd: checkout, env_keys: [] },
    ]);
    assert.deepEqual(m.components, [
      {
        checkpoints: [],
        command_id: "prime-rl-sft",
        extra: {},
        logs: ["prime-rl/stdout.log", "prime-rl/stderr.log"],
        metrics: [],
        name: "trainer",
        role: "primary",
        status: "succeeded",
      },
    ]);
    assert.deepEqual(m.artifacts, { checkpoints: [], exported_models: [] });
    assert.deepEqual(m.extra, {});
    assert.equal(fs.readFileSync(path.join(c.work, "command.txt"), "utf8"), `uv ${argv.join(" ")}\n`);
    assert.equal(fs.readFileSync(path.join(c.work, "prime-rl", "stdout.log"), "utf8"), "trainer ok\n");
    assert.equal(fs.readFileSync(path.join(c.work, "prime-rl", "stderr.log"), "utf8"), "trainer warning\n");
    // Keys sorted and indented as upstream's json.dumps(indent=2, sort_keys=True).
    const text = fs.readFileSync(path.join(c.work, "train-run.json"), "utf8");
    assert.ok(
      text.startsWith('{\n  "artifacts": {\n    "checkpoints": [],\n    "exported_models": []\n  },\n'),
    );
  });

  it("packages a local JSONL as a dataset folder named by its digest, checked first", () => {
    const c = fresh();
    const source = path.join(c.dir, "prime-sft.jsonl");
    const text = `${JSON.stringify(ROW)}\n`;
    fs.writeFileSync(source, text);
    const r = bench(c, ["--config", "sft.toml", "--data", "prime-sft.jsonl", "--work-dir", "train-run"]);
    assert.equal(r.code, 0, r.stderr);
    const digest = createHash("sha256").update(text).digest("hex").slice(0, 12);
    const dataset = path.join(c.work, `prime-rl-dataset-${digest}`);
    const train = path.join(dataset, "train.jsonl");
    assert.equal(fs.readFileSync(train, "utf8"), text);
    assert.ok(!fs.existsSync(path.join(c.work, "prime-rl-dataset-staging")));
    assert.deepEqual(argvOf(c.rec), [
      "run",
      "sft",
      "@",
      c.config,
      "--data.name",
      dataset,
      "--output-dir",
      path.join(c.work, "prime-rl-output"),
    ]);
    assert.deepEqual(manifestOf(c.work).extra.prime_rl_sft_dataset, {
      dataset_dir: dataset,
      kind: "local_jsonl_packaged",
      resolved_data: dataset,
      source_data: "prime-sft.jsonl",
      train_jsonl: train,
      tool_defs_mode: "preserve",
      tool_defs_removed_rows: null,
      chat_template_kwargs: null,
      chat_template_kwargs_rows: null,
      message_tail_truncation: "off",
      message_tail_truncated_rows: null,
      message_tail_max_area: null,
      message_tail_max_tokens_before: null,
      message_tail_max_tokens_after: null,
      custom_trainer_pretokenized_rows: null,
      custom_trainer_pretokenized_trainable_tokens: null,
      validation: { ok: true, rows: 1, rows_with_tool_calls: 1 },
    });
  });

  it("--tool-defs-mode omit and --chat-template-kwarg rewrite the packaged rows", () => {
    const c = fresh();
    fs.writeFileSync(path.join(c.dir, "rows.jsonl"), `${JSON.stringify({ ...ROW, reward: 0.5 })}\n`);
    const r = bench(c, [
      "--config",
      c.config,
      "--data",
      "rows.jsonl",
      "--work-dir",
      c.work,
      "--tool-defs-mode",
      "omit",
      "--chat-template-kwarg",
      "enable_thinking=False",
      "--chat-template-kwarg",
      "note=plain text",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const plan = manifestOf(c.work).extra.prime_rl_sft_dataset;
    assert.equal(plan.tool_defs_mode, "omit");
    assert.equal(plan.tool_defs_removed_rows, 1);
    assert.deepEqual(plan.chat_template_kwargs, { enable_thinking: false, note: "plain text" });
    assert.equal(plan.chat_template_kwargs_rows, 1);
    const row = JSON.parse(fs.readFileSync(plan.train_jsonl, "utf8"));
    assert.equal(row.tool_defs, undefined);
    assert.deepEqual(row.chat_template_kwargs, { enable_thinking: false, note: "plain text" });
    assert.deepEqual(row.messages, ROW.messages);
    assert.equal(path.basename(plan.dataset_dir).startsWith("prime-rl-dataset-"), true);
  });

  it("rewritten rows keep a float reward a float, and the rest as upstream writes it", () => {
    const c = fresh();
    // A row as Python's json.dumps writes it: reward 1.0, an object argument, non-ASCII text.
    const source =
      '{"messages": [{"role": "user", "content": "h\u00e9llo"}, {"role": "assistant", "content": "", ' +
      '"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "finish", "arguments": ' +
      '{"reward": 1}}}]}, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}, {"role": ' +
      '"assistant", "content": "done"}], "tool_defs": [{"type": "function", "function": {"name": ' +
      '"finish", "parameters": {"type": "object", "properties": {}}}}], "reward": 1.0, "metadata": ' +
      '{"rollout": "r1", "turns": 2}}\n';
    fs.writeFileSync(path.join(c.dir, "rows.jsonl"), source);
    const r = bench(c, [
      "--config",
      c.config,
      "--data",
      "rows.jsonl",
      "--work-dir",
      c.work,
      "--tool-defs-mode",
      "omit",
      "--chat-template-kwarg",
      "enable_thinking=false",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const plan = manifestOf(c.work).extra.prime_rl_sft_dataset;
    // python3: row = json.loads(source); del row["tool_defs"];
    // row["chat_template_kwargs"] = {"enable_thinking": False};
    // json.dumps(row, ensure_ascii=False, sort_keys=True)
    assert.equal(
      fs.readFileSync(plan.train_jsonl, "utf8"),
      '{"chat_template_kwargs": {"enable_thinking": false}, "messages": [{"content": "h\u00e9llo", ' +
        '"role": "user"}, {"content": "", "role": "assistant", "tool_calls": [{"function": {"arguments": ' +
        '{"reward": 1}, "name": "finish"}, "id": "call_1", "type": "function"}]}, {"content": "ok", ' +
        '"role": "tool", "tool_call_id": "call_1"}, {"content": "done", "role": "assistant"}], ' +
        '"metadata": {"rollout": "r1", "turns": 2}, "reward": 1.0}\n',
    );
  });

  it("sample_mean and the Mobile300 profile: checked as upstream does, then refused by name", () => {
    const stack = '[model]\nname = "Qwen/Qwen3.5-9B"\n[data]\nbatch_size = 1\npack_function = "stack"\n';
    for (const [args, re] of [
      [
        ["--loss-normalization", "sample_mean"],
        /--loss-normalization sample_mean is not supported by this bench \(.*BENCHFLOW_PRIME_RL_SAMPLE_MEAN_LOSS/,
      ],
      [
        ["--compat-profile", "env-0-mobile300-pr828", "--data", "rows.jsonl"],
        /--compat-profile env0-mobile300-pr828 is not supported by this bench \(.*pre-tokenized/,
      ],
      [
        ["--message-tail-truncation", "keep_user", "--data", "rows.jsonl"],
        /--message-tail-truncation keep-first-user is not supported by this bench/,
      ],
    ] as const) {
      const c = fresh(stack);
      fs.writeFileSync(path.join(c.dir, "rows.jsonl"), `${JSON.stringify(ROW)}\n`);
      const r = bench(c, ["--config", c.config, "--work-dir", c.work, ...args]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, re);
      assert.ok(!fs.existsSync(c.work), "something was written");
      assert.ok(!fs.existsSync(`${c.rec}.argv`), "the trainer was launched");
    }
    // The profile's own checks run first: 300 micro-steps need a batch size; its pre-tokenized
    // rows need a model and local data.
    const checks: [string, string[], RegExp][] = [
      ["max_steps = 1\n", [], /requires data\.batch_size/],
      ["[data]\nbatch_size = 1\n", [], /--message-tail-truncation requires model\.name/],
      [stack, [], /--message-tail-truncation requires --data\.$/m],
      [stack, ["--data", "benchflow/remote"], /--tool-defs-mode omit requires --data to be a local/],
    ];
    for (const [config, args, re] of checks) {
      const c = fresh(config);
      const r = bench(c, [
        "--config",
        c.config,
        "--work-dir",
        c.work,
        "--compat-profile",
        "env0-mobile300-pr828",
        ...args,
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, re);
    }
  });

  it("--message-tail-truncation: upstream's checks, in its words, before the refusal by name", () => {
    const model = '[model]\nname = "Qwen/Qwen3.5-9B"\n';
    const checks: [string, string[], RegExp][] = [
      [
        model,
        ["--data", "benchflow/remote-dataset"],
        /--message-tail-truncation requires --data to be a local JSONL/,
      ],
      [model, [], /--message-tail-truncation requires --data\.$/m],
      ["max_steps = 1\n", ["--data", "benchflow/remote"], /requires model\.name in the Prime-RL config/],
      [
        `${model}[data]\nseq_len = 0\n`,
        ["--data", "benchflow/remote"],
        /data\.seq_len must be a positive integer/,
      ],
    ];
    for (const [config, args, re] of checks) {
      const c = fresh(config);
      const r = bench(c, [
        "--config",
        c.config,
        "--work-dir",
        c.work,
        "--message-tail-truncation",
        "keep-first-user",
        ...args,
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, re);
      assert.ok(!fs.existsSync(c.work));
    }
    const c = fresh(model);
    const bad = bench(c, ["--config", c.config, "--work-dir", c.work, "--message-tail-truncation", "middle"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /must be 'off', 'keep-first-user', or 'custom-trainer-pretokenized'/);
    const pre = bench(c, [
      "--config",
      c.config,
      "--work-dir",
      c.work,
      "--message-tail-truncation",
      "token-suffix",
    ]);
    assert.equal(pre.code, 1);
    assert.match(pre.stderr, /custom-trainer-pretokenized requires --tool-defs-mode omit/);
    // Off, under any of its names, is no truncation at all.
    assert.equal(
      bench(c, ["--config", c.config, "--work-dir", c.work, "--message-tail-truncation", "disabled"]).code,
      0,
    );
  });

  it("a dataset folder is passed as it is, or copied whole when its rows must change", () => {
    const c = fresh();
    const folder = path.join(c.dir, "dataset");
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, "train.jsonl"), `${JSON.stringify(ROW)}\n`);
    fs.writeFileSync(path.join(folder, "README.md"), "card\n");
    assert.equal(bench(c, ["--config", c.config, "--work-dir", c.work, "--data", "dataset"]).code, 0);
    const plain = manifestOf(c.work).extra.prime_rl_sft_dataset;
    assert.equal(plain.kind, "local_dataset_dir");
    assert.equal(plain.dataset_dir, folder);
    assert.equal(plain.train_jsonl, path.join(folder, "train.jsonl"));
    assert.deepEqual(plain.validation, { ok: true, rows: 1, rows_with_tool_calls: 1 });
    assert.deepEqual(argvOf(c.rec).slice(4, 6), ["--data.name", folder]);

    const r = bench(c, [
      "--config",
      c.config,
      "--work-dir",
      c.work,
      "--data",
      "dataset",
      "--tool-defs-mode",
      "omit",
      "--force",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const copied = manifestOf(c.work).extra.prime_rl_sft_dataset;
    assert.equal(copied.kind, "local_dataset_dir_transformed");
    assert.match(path.basename(copied.dataset_dir), /^prime-rl-dataset-[0-9a-f]{12}$/);
    assert.equal(fs.readFileSync(path.join(copied.dataset_dir, "README.md"), "utf8"), "card\n");
    assert.equal(JSON.parse(fs.readFileSync(copied.train_jsonl, "utf8")).tool_defs, undefined);
    assert.equal(copied.tool_defs_removed_rows, 1);
    // The source folder is left as it was.
    assert.ok(JSON.parse(fs.readFileSync(path.join(folder, "train.jsonl"), "utf8")).tool_defs);
  });

  it("a trainer that fails: its exit status, a failed manifest, its stderr kept", () => {
    const c = fresh();
    const r = bench(c, ["--config", c.config, "--work-dir", c.work], { STAND_IN_EXIT: "7" });
    assert.equal(r.code, 7);
    assert.match(r.stderr, /Prime-RL SFT failed with exit code 7; see .*train-run\.json/);
    const m = manifestOf(c.work);
    assert.equal(m.overall_status, "failed");
    assert.equal(m.components[0].status, "failed");
    assert.deepEqual(m.components[0].extra, { returncode: 7 });
    assert.equal(fs.readFileSync(path.join(c.work, "prime-rl", "stderr.log"), "utf8"), "trainer warning\n");
  });

  it("records the names of the credentials set, never their values", () => {
    const c = fresh();
    const r = bench(c, ["--config", c.config, "--work-dir", c.work], {
      HF_TOKEN: "hf-secret-value",
      WANDB_API_KEY: "wandb-secret-value",
      PRIME_API_KEY: "",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(manifestOf(c.work).commands[0].env_keys, ["HF_TOKEN", "WANDB_API_KEY"]);
    for (const f of ["train-run.json", "command.txt"]) {
      const text = fs.readFileSync(path.join(c.work, f), "utf8");
      assert.ok(!text.includes("secret-value"), f);
    }
    // The trainer itself still gets them: it is the one that uses them.
    assert.match(fs.readFileSync(`${c.rec}.env`, "utf8"), /^HF_TOKEN=hf-secret-value$/m);
  });

  it("a relative --config is found in the Prime-RL checkout", () => {
    const c = fresh();
    const checkout = path.join(c.dir, "prime-rl");
    const config = path.join(checkout, "examples", "reverse_text", "sft.toml");
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.writeFileSync(config, "max_steps = 1\n");
    const r = bench(c, [
      "--config",
      "examples/reverse_text/sft.toml",
      "--prime-rl-dir",
      checkout,
      "--work-dir",
      c.work,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(argvOf(c.rec)[3], config);
    assert.equal(manifestOf(c.work).config, config);
  });

  it("without uv on PATH: exit 1, how to install it, nothing written", () => {
    const c = fresh();
    const r = bench(c, ["--config", c.config, "--work-dir", c.work], {}, false);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /uv is required to launch Prime-RL SFT/);
    assert.match(r.stderr, /github\.com\/PrimeIntellect-ai\/prime-rl/);
    assert.match(r.stderr, /--prime-rl-dir/);
    assert.ok(!fs.existsSync(c.work));
  });

  it("refuses bad input before launching anything", () => {
    const c = fresh();
    const refused = (args: string[], code: number, re: RegExp) => {
      const r = bench(c, ["--config", c.config, "--work-dir", c.work, ...args]);
      assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.ok(!fs.existsSync(`${c.rec}.argv`), "the trainer was launched");
    };
    // Upstream's command exits 1 on every refusal of its launcher; 2 is its parser's.
    refused(["--data", "missing.jsonl"], 1, /--data JSONL file not found: missing\.jsonl/);
    refused(
      ["--data", "benchflow/remote", "--tool-defs-mode", "omit"],
      1,
      /--tool-defs-mode omit requires --data to be a local JSONL/,
    );
    refused(
      ["--data", "benchflow/remote", "--chat-template-kwarg", "a=1"],
      1,
      /--chat-template-kwarg requires --data to be a local JSONL/,
    );
    refused(["--override", "max_steps"], 1, /--override must be KEY=VALUE/);
    refused(
      ["--loss-mask", "all", "--override", "data.loss_mask.user=false"],
      1,
      /--loss-mask cannot be combined/,
    );
    refused(["--target-examples", "0"], 1, /--target-examples must be a positive integer/);
    refused(["--loss-normalization", "sample_mean"], 1, /sample_mean requires data\.pack_function=stack/);
    refused(["--tool-defs-mode", "keepall"], 1, /'preserve' or 'omit'/);
    refused(
      ["--compat-profile", "env0-mobile300-pr828", "--loss-normalization", "token_mean"],
      1,
      /requires --loss-normalization sample_mean/,
    );
    refused(["--compat-profile", "mobile"], 1, /Unsupported --compat-profile 'mobile'/);
    // What the parser itself rejects stays a usage error.
    refused(["--backend", "trl"], 2, /only prime-rl/);
    refused(["--target-examples", "ten"], 2, /--target-examples: "ten" is not a whole number/);
    refused(["--no-such-flag"], 2, /unknown option '--no-such-flag'/);
    const bad = path.join(c.dir, "bad.jsonl");
    fs.writeFileSync(
      bad,
      `${JSON.stringify({ messages: [{ role: "assistant", content: "x", tool_calls: [{ id: "c", type: "function", function: { name: "nope", arguments: "{}" } }] }], tool_defs: [] })}\n`,
    );
    refused(["--data", bad], 1, /bad\.jsonl line 1: /);
    const r = bench(fresh("max_steps = [\n"), ["--config", "sft.toml"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /sft\.toml: not a valid TOML config/);
  });

  it("an existing train-run.json is kept unless --force", () => {
    const c = fresh();
    assert.equal(bench(c, ["--config", c.config, "--work-dir", c.work]).code, 0);
    const again = bench(c, ["--config", c.config, "--work-dir", c.work]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /train-run\.json already exists; pass --force to overwrite/);
    assert.equal(bench(c, ["--config", c.config, "--work-dir", c.work, "--force"]).code, 0);
  });

  it("a stopped bench stops the trainer and records the run as failed", async () => {
    const c = fresh();
    const child = spawn(
      process.execPath,
      ["--import", TSX, CLI, "run", "sft", "--config", c.config, "--work-dir", c.work],
      {
        cwd: c.dir,
        env: {
          PATH: `${bin}:/usr/bin:/bin`,
          HOME: os.tmpdir(),
          STAND_IN_RECORD: c.rec,
          STAND_IN_SLEEP: "600",
        },
        stdio: "ignore",
      },
    );
    const exited = once(child, "exit");
    // The trainer has started once it has written its record.
    while (!fs.existsSync(`${c.rec}.env`)) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 128 + 15);
    const m = manifestOf(c.work);
    assert.equal(m.overall_status, "failed");
    assert.deepEqual(m.components[0].extra, { returncode: -15 });
  });

  it("--follow also prints the trainer's stdout", () => {
    const c = fresh();
    const r = bench(c, ["--config", c.config, "--work-dir", c.work, "--follow"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.startsWith("trainer ok\nPrime-RL SFT completed"), r.stdout);
  });
});
