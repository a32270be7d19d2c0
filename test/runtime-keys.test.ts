// Harbor's `artifacts`: what the task names is copied out of the sandbox after the agent, with a
// manifest that says what was found; a missing artifact is recorded, not a failure.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { bench, benchOracle, rollouts, tempDir, writeFiles } from "./testing/bench.js";

describe("task artifacts", () => {
  let root: string;
  let task: string;
  before(async () => {
    root = await tempDir("artifacts");
    task = path.join(root, "keeps-output");
    const files: Record<string, string> = {
      "task.toml": [
        'artifacts = ["/app/report.txt", { source = "/app/out", destination = "outputs", exclude = ["*.tmp"] }, "/app/never-written"]',
        "[environment]",
        "allow_internet = false",
        "",
      ].join("\n"),
      "instruction.md": "Write a report.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
      "solution/solve.sh":
        "#!/bin/bash\necho findings > /app/report.txt\nmkdir -p /app/out/sub\necho a > /app/out/sub/a.txt\necho junk > /app/out/sub/b.tmp\n" +
        // A manifest of the agent's own making must not stand for ours.
        "echo '[\"forged\"]' > /logs/artifacts/manifest.json\n",
      "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
    };
    await writeFiles(task, files);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it("copies each artifact into artifacts/ and lists them in manifest.json, not the agent's forged one", async () => {
    const jobs = path.join(root, "jobs");
    const run = await benchOracle(task, jobs);
    assert.equal(run.code, 0, run.stderr);
    const [rollout] = await rollouts(jobs);
    assert.equal(rollout?.result?.rewards?.reward, 1);
    const dir = path.join(rollout?.dir ?? "", "artifacts");
    assert.equal(await fs.readFile(path.join(dir, "app/report.txt"), "utf8"), "findings\n");
    assert.equal(await fs.readFile(path.join(dir, "outputs/sub/a.txt"), "utf8"), "a\n");
    await assert.rejects(fs.stat(path.join(dir, "outputs/sub/b.tmp")), /ENOENT/);
    const manifest = JSON.parse(await fs.readFile(path.join(dir, "manifest.json"), "utf8"));
    assert.deepEqual(
      manifest.map((m: { source: string; status: string }) => [m.source, m.status]),
      [
        ["/app/report.txt", "collected"],
        ["/app/out", "collected"],
        ["/app/never-written", "missing"],
      ],
    );
  });

  it("refuses an artifact that is not an absolute path, naming the field", async () => {
    const bad = path.join(root, "bad-artifact");
    await fs.cp(task, bad, { recursive: true });
    await fs.writeFile(path.join(bad, "task.toml"), 'artifacts = ["report.txt"]\n');
    const check = await bench(["tasks", "check", bad]);
    assert.equal(check.code, 1);
    assert.match(check.stdout, /artifacts\[0\] needs an absolute source path inside the sandbox/);
  });
});

describe("[environment.healthcheck]", () => {
  let root: string;
  before(async () => {
    root = await tempDir("healthcheck");
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  async function writeTask(name: string, healthcheck: string): Promise<string> {
    const task = path.join(root, name);
    const files: Record<string, string> = {
      "task.toml": `[environment]\nallow_internet = false\nhealthcheck = ${healthcheck}\n`,
      "instruction.md": "Nothing to do.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
      "solution/solve.sh": "#!/bin/bash\ntrue\n",
      // Scores 1 only when the healthcheck ran three times before the verifier.
      "tests/test.sh":
        '#!/bin/bash\nif [ "$(cat /app/probes 2>/dev/null)" = 3 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    };
    await writeFiles(task, files);
    return task;
  }

  it("runs before the agent until it passes, failures in a row counted", async () => {
    const probe =
      "n=$(cat /app/probes 2>/dev/null || echo 0); n=$((n+1)); echo $n > /app/probes; [ $n -ge 3 ]";
    const task = await writeTask(
      "becomes-healthy",
      `{ command = ${JSON.stringify(probe)}, interval_sec = 0.05, retries = 5 }`,
    );
    const jobs = path.join(root, "jobs-ok");
    const run = await benchOracle(task, jobs);
    assert.equal(run.code, 0, run.stderr);
    const [rollout] = await rollouts(jobs);
    assert.equal(rollout?.result?.rewards?.reward, 1, JSON.stringify(rollout?.result));
  });

  it("ends the rollout as sandbox_setup with the last output when it never passes", async () => {
    const task = await writeTask(
      "never-healthy",
      '{ command = "echo db not ready; exit 1", interval_sec = 0.05, retries = 2 }',
    );
    const jobs = path.join(root, "jobs-bad");
    const run = await benchOracle(task, jobs, ["--retry-attempts", "0"]);
    const [rollout] = await rollouts(jobs);
    assert.equal(rollout?.result?.error_category, "sandbox_setup", run.stderr);
    assert.equal(rollout?.result?.rewards, null);
    assert.match(
      String(rollout?.result?.error),
      /never became healthy.*failed 2 time\(s\) in a row.*db not ready/,
    );
  });
});

describe("setup_commands and prompt_prefix (upstream's keys)", () => {
  let root: string;
  before(async () => {
    root = await tempDir("setup-commands");
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  async function writeTask(name: string, toml: string): Promise<string> {
    const task = path.join(root, name);
    const files: Record<string, string> = {
      "task.toml": toml,
      "instruction.md": "Count the lines.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
      "solution/solve.sh": "#!/bin/bash\ntrue\n",
      "tests/test.sh":
        '#!/bin/bash\nif [ "$(cat /app/setup.log 2>/dev/null)" = "$(printf "one /app\\ntwo /tmp X")" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    };
    await writeFiles(task, files);
    return task;
  }

  it("runs the setup commands in order, with their cwd and env, and prefixes the prompt", async () => {
    const task = await writeTask(
      "set-up",
      [
        "[agent]",
        'prompt_prefix = "You are in a sandbox. "',
        "[environment]",
        "allow_internet = false",
        'setup_commands = ["echo one $PWD >> /app/setup.log", { command = "echo two $PWD $V >> /app/setup.log", cwd = "/tmp", env = { V = "X" } }]',
        "",
      ].join("\n"),
    );
    const jobs = path.join(root, "jobs-ok");
    const run = await benchOracle(task, jobs);
    assert.equal(run.code, 0, run.stderr);
    const [rollout] = await rollouts(jobs);
    assert.equal(rollout?.result?.rewards?.reward, 1, JSON.stringify(rollout?.result));
    const prompts = await fs.readFile(path.join(rollout?.dir ?? "", "prompts.json"), "utf8");
    assert.match(prompts, /You are in a sandbox\. Count the lines\./);
  });

  it("ends the rollout as sandbox_setup when a setup command fails", async () => {
    const task = await writeTask(
      "set-up-fails",
      '[environment]\nallow_internet = false\nsetup_commands = ["echo mirror down >&2; exit 7"]\n',
    );
    const jobs = path.join(root, "jobs-bad");
    await benchOracle(task, jobs, ["--retry-attempts", "0"]);
    const [rollout] = await rollouts(jobs);
    assert.equal(rollout?.result?.error_category, "sandbox_setup");
    assert.match(String(rollout?.result?.error), /setup_commands\[0\] .* exited 7; last output: mirror down/);
  });
});
