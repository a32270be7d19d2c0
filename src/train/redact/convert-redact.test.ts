// `bench train convert` through the real CLI: secrets in a user message, a tool call's arguments, a
// tool's output and the assistant's reply are redacted by default and kept with --no-redact; a
// tokens row whose text held one is left out and said so. The secret shapes are upstream's test
// examples (tests/trajectories/test_redaction.py).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { writeJob } from "../../jobs-dir/testing/job-builder.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { isRecord } from "../../util/jsonl.js";

const MAIN = fileURLToPath(new URL("../../cli/main.ts", import.meta.url));
const TSX = fileURLToPath(import.meta.resolve("tsx"));

const ANTHROPIC = `sk-ant-${"api03-abc123XYZ_defghijklmnopqrstuvwxyz0123456789"}`;
const PLAIN_TOKEN = "plainvaluewithnoprefix12345";
const AWS = `AKIA${"IOSFODNN7EXAMPLE"}`;
const HEADER_VALUE = "abc123secret456value";
const SECRETS = [ANTHROPIC, PLAIN_TOKEN, AWS, HEADER_VALUE];

const SECRET_ARGS = JSON.stringify({ command: `export GITHUB_TOKEN=${PLAIN_TOKEN} && git push` });

/** The builder's trajectory with a secret put in each place a row takes text from. */
function plantSecrets(rolloutDir: string): void {
  const file = path.join(rolloutDir, "trajectory", "llm_trajectory.jsonl");
  const plant = (v: unknown, key?: string): unknown => {
    if (typeof v === "string") {
      if (v.startsWith("Solve the task ")) return `${v} The deploy key is ${ANTHROPIC}.`;
      if (key === "arguments" && v === JSON.stringify({ command: "echo step 0" })) return SECRET_ARGS;
      if (key === "content" && v === "step 0") return `pushed; the bucket key is ${AWS}`;
      if (key === "content" && v === "Done.") return `Done. I sent x-api-key: ${HEADER_VALUE}`;
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => plant(x));
    if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plant(x, k)]));
    return v;
  };
  const lines = fs.readFileSync(file, "utf8").trim().split("\n");
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(plant(JSON.parse(l)))).join("\n")}\n`);
}

// Made here, not in a hook: tmp() registers its cleanup with the file.
const root = tmp("bf-redact-");

/** The first tool call of a row's messages (prime-sft) or prompt (trl-sft). */
function firstCall(messages: any[]): any {
  const call = messages.find((m) => Array.isArray(m.tool_calls))?.tool_calls[0];
  assert.ok(call, "the row has no tool call");
  return call;
}

function bench(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", TSX, MAIN, "train", ...args], {
    cwd: root,
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function convert(job: string, format: string, ...flags: string[]) {
  const out = `train/${job}-${format}${flags.join("")}.jsonl`;
  const manifest = out.replace(/\.jsonl$/, ".manifest.json");
  const r = bench(
    "convert",
    `jobs/${job}`,
    "--out",
    out,
    "--format",
    format,
    "--manifest",
    manifest,
    ...flags,
  );
  assert.equal(r.code, 0, r.stderr);
  const text = fs.readFileSync(path.join(root, out), "utf8");
  return {
    ...r,
    out,
    text,
    rows:
      text.trim() === ""
        ? []
        : text
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l)),
    manifest: JSON.parse(fs.readFileSync(path.join(root, manifest), "utf8")),
  };
}

before(() => {
  for (const [name, tokens] of [
    ["secret", false],
    ["secret-tokens", true],
  ] as const) {
    const [built] = writeJob({ dir: path.join(root, "jobs", name), rollouts: [{ calls: 2, tokens }] });
    plantSecrets((built as { dir: string }).dir);
  }
  // A clean rollout whose responses carry vLLM's logprobs block (`{"token": "Hello", ...}`, from
  // test/fixtures/wire): the tokens a block spells out are not secrets.
  const [clean] = writeJob({
    dir: path.join(root, "jobs", "clean-tokens"),
    rollouts: [{ calls: 2, tokens: true }],
  });
  withVllmLogprobs((clean as { dir: string }).dir);
});

function withVllmLogprobs(rolloutDir: string): void {
  const vllm = JSON.parse(
    fs.readFileSync(
      new URL("../../../test/fixtures/wire/vllm/chat-completion.logprobs.json", import.meta.url),
      "utf8",
    ),
  );
  const logprobs = vllm.choices[0].logprobs;
  assert.ok(logprobs.content.some((t: { token: string }) => t.token === "Hello"));
  const file = path.join(rolloutDir, "trajectory", "llm_trajectory.jsonl");
  const lines = fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  for (const line of lines) line.response.body.choices[0].logprobs = logprobs;
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

describe("bench train convert redacts secrets by default", () => {
  it("prime-sft: user text, tool arguments, tool output and the reply lose their secrets; the row still validates", () => {
    const c = convert("secret", "prime-sft");
    assert.equal(c.rows.length, 1);
    for (const s of SECRETS) assert.ok(!c.text.includes(s), `${s} survived`);
    const messages = c.rows[0].messages as Array<Record<string, unknown>>;
    const byRole = (role: string) => messages.filter((m) => m.role === role).map((m) => String(m.content));
    assert.ok(byRole("user")[0]?.endsWith("The deploy key is ***REDACTED***."));
    assert.deepEqual(byRole("tool"), ["pushed; the bucket key is ***REDACTED***"]);
    assert.equal(byRole("assistant").at(-1), "Done. I sent x-api-key: ***REDACTED***");
    // The env name stays; only its value goes, inside the arguments' JSON text.
    assert.deepEqual(JSON.parse(firstCall(messages).function.arguments), {
      command: "export GITHUB_TOKEN=***REDACTED*** && git push",
    });
    assert.equal(c.manifest.redact, true);
    assert.equal(c.manifest.rows_redacted, 1);
    assert.equal(c.manifest.secrets_redacted, 4);
    const v = bench("validate", c.out, "--require-tool-calls");
    assert.equal(v.code, 0, v.stderr);
  });

  it("prime-sft --no-redact keeps every secret, and the arguments byte for byte", () => {
    const c = convert("secret", "prime-sft", "--no-redact");
    for (const s of SECRETS) assert.ok(c.text.includes(s), `${s} missing`);
    assert.equal(firstCall(c.rows[0].messages).function.arguments, SECRET_ARGS);
    assert.equal(c.manifest.redact, false);
    assert.equal(c.manifest.rows_redacted, 0);
    assert.equal(c.manifest.secrets_redacted, 0);
  });

  it("trl-sft: the same, with arguments as objects", () => {
    const c = convert("secret", "trl-sft");
    for (const s of SECRETS) assert.ok(!c.text.includes(s), `${s} survived`);
    assert.deepEqual(firstCall(c.rows[0].prompt).function.arguments, {
      command: "export GITHUB_TOKEN=***REDACTED*** && git push",
    });
    assert.equal(c.rows[0].completion[0].content, "Done. I sent x-api-key: ***REDACTED***");
    assert.equal(c.manifest.rows_redacted, 1);

    const kept = convert("secret", "trl-sft", "--no-redact");
    for (const s of SECRETS) assert.ok(kept.text.includes(s), `${s} missing`);
    assert.deepEqual(firstCall(kept.rows[0].prompt).function.arguments, JSON.parse(SECRET_ARGS));
  });

  it("--redact says the default out loud", () => {
    const c = convert("secret", "prime-sft", "--redact");
    for (const s of SECRETS) assert.ok(!c.text.includes(s));
  });
});

describe("tokens rows cannot be redacted", () => {
  it("leaves out a tokens row whose text held a secret, counts it with its reason and warns", () => {
    const c = convert("secret-tokens", "tokens");
    assert.equal(c.rows.length, 0);
    assert.equal(c.manifest.skipped_secret_in_tokens, 1);
    assert.equal(c.manifest.secrets_in_tokens.length, 1);
    const entry = c.manifest.secrets_in_tokens[0];
    assert.match(entry.rollout_dir, /^jobs\/secret-tokens\/demo-task__[0-9a-f]{8}$/);
    assert.equal(entry.thread, 0);
    assert.match(entry.reason, /^call 0's request holds 1 API key$/);
    assert.match(c.stderr, /1 tokens row\(s\) left out: .*cannot be redacted.*--no-redact keeps them/);
  });

  it("--no-redact keeps it; a clean tokens row is written with redaction on", () => {
    const kept = convert("secret-tokens", "tokens", "--no-redact");
    assert.equal(kept.rows.length, 1);
    assert.equal(kept.manifest.skipped_secret_in_tokens, 0);
    assert.doesNotMatch(kept.stderr, /left out/);
    const clean = convert("clean-tokens", "tokens");
    assert.equal(clean.rows.length, 1);
    assert.deepEqual(clean.manifest.secrets_in_tokens, []);
    assert.equal(clean.manifest.rows_redacted, 0);
  });
});
