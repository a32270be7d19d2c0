import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { parse as parseToml } from "smol-toml";
import { checkKeys, editDistance, nearestKeys } from "./keys.js";

const check = (toml: string) => checkKeys(parseToml(toml) as Record<string, unknown>, "t/task.toml");

describe("editDistance", () => {
  it("counts insertions, substitutions and adjacent swaps as one edit each", () => {
    assert.equal(editDistance("timout_sec", "timeout_sec"), 1);
    assert.equal(editDistance("timeout_sce", "timeout_sec"), 1);
    assert.equal(editDistance("tiemout_sce", "timeout_sec"), 2);
    assert.equal(editDistance("cpus", "cpus"), 0);
    assert.equal(editDistance("", "abc"), 3);
  });
});

describe("nearestKeys", () => {
  const known = ["timeout_sec", "env", "user", "reward_range"];
  it("finds typos, case and separator variants, nearest first", () => {
    assert.deepEqual(nearestKeys("timout_sec", known), ["timeout_sec"]);
    assert.deepEqual(nearestKeys("Timeout-Sec", known), ["timeout_sec"]);
    assert.deepEqual(nearestKeys("rewardrange", known), ["reward_range"]);
    assert.deepEqual(nearestKeys("usr", known), ["user"]);
  });
  it("holds short keys to one edit so unrelated words are not taken for typos", () => {
    assert.deepEqual(nearestKeys("tags", ["task"]), []);
    assert.deepEqual(nearestKeys("completely_different", known), []);
  });
});

describe("checkKeys", () => {
  afterEach(() => {
    delete process.env.BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS;
  });

  it("accepts a full Harbor task.toml, warning only about what is not acted on", () => {
    const report = check(`
version = "1.0"
source = "terminal-bench"
[task]
name = "org/x"
description = "d"
keywords = ["k"]
[[task.authors]]
name = "A"
email = "a@example.com"
[metadata]
author_name = "A"
anything_goes = true
[verifier]
timeout_sec = 120.0
env = { K = "v" }
[agent]
timeout_sec = 300.0
user = "agent"
[environment]
build_timeout_sec = 600.0
docker_image = "img:1"
cpus = 1
memory = "2G"
memory_mb = 2048
storage = "10G"
storage_mb = 10240
gpus = 0
allow_internet = true
[solution]
env = {}
[[environment.mcp_servers]]
name = "mcp"
transport = "streamable-http"
url = "http://mcp:8000/mcp"
`);
    assert.deepEqual(report.refusals, []);
    assert.deepEqual(report.warnings, [
      "t/task.toml: environment.mcp_servers is accepted but not acted on yet; the task runs without it",
    ]);
  });

  it("refuses any unknown key inside a closed section, listing what it accepts", () => {
    const { refusals } = check("[environment]\nflavour = 'vanilla'\n");
    assert.equal(refusals.length, 1);
    assert.match(
      refusals[0] ?? "",
      /^t\/task\.toml: unknown key environment\.flavour; \[environment\] accepts only /,
    );
    assert.ok(refusals[0]?.includes("docker_image"));
  });

  it("refuses likely typos anywhere, with the dotted key and nearest known keys", () => {
    const { refusals } = check("verifer = 1\n[task]\nnmae = 'x'\n[agent]\nTimeout_Sec = 3\n");
    assert.deepEqual(refusals, [
      "t/task.toml: unknown key verifer; did you mean verifier? Fix the spelling or remove it",
      "t/task.toml: unknown key task.nmae; did you mean name? Fix the spelling or remove it",
      "t/task.toml: unknown key agent.Timeout_Sec; did you mean timeout_sec? Fix the spelling or remove it",
    ]);
  });

  it("only warns about other unknown keys outside closed sections", () => {
    const report = check("dataset = 'x'\n[task]\nname = 'o/x'\nhomepage = 'h'\n");
    assert.deepEqual(report.refusals, []);
    assert.deepEqual(report.warnings, [
      "t/task.toml: unknown key dataset (ignored)",
      "t/task.toml: unknown key task.homepage (ignored)",
    ]);
  });

  it("checks list entries and nested step tables by index", () => {
    const { refusals } = check("[[steps]]\nname = 'one'\nfoo = 1\n[steps.agent]\ntimout_sec = 2\n");
    assert.equal(refusals.length, 2);
    assert.ok(refusals[0]?.includes("unknown key steps[0].foo; [steps[0]] accepts only name,"));
    assert.ok(refusals[1]?.includes("unknown key steps[0].agent.timout_sec; did you mean timeout_sec?"));
  });

  it("warns by name about known keys that are not acted on, but not about their defaults", () => {
    const { refusals, warnings } = check(`
[verifier]
service = "main"
sandbox_mode = "shared"
pytest_plugins = ["ctrf"]
judge = { model = "m" }
[verifier.hardening]
cleanup_conftests = true
[environment]
gpus = 2
setup_commands = [{ command = "x" }]
healthcheck = { command = "true" }
[[steps]]
name = "a"
healthcheck = { command = "true" }
`);
    assert.deepEqual(refusals, []);
    const named = warnings.map((w) => /: (\S+) is accepted but not acted on/.exec(w)?.[1]);
    assert.deepEqual(named, [
      "verifier.pytest_plugins",
      "verifier.judge",
      "environment.gpus",
      "steps[0].healthcheck",
    ]);
  });

  it("downgrades refusals to warnings under BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS=1", () => {
    process.env.BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS = "1";
    const report = check("[verifier]\ntimout_sec = 5\n");
    assert.deepEqual(report.refusals, []);
    assert.ok(report.warnings[0]?.includes("verifier.timout_sec; did you mean timeout_sec?"));
  });
});
