// `bench run --config FILE` and upstream's spellings, read before the command line is parsed: only
// for `bench run`, and with the command line's own task and flags after (so they win).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { Command } from "commander";
import { registerRunCommand } from "./run.js";
import { expandRunConfig } from "./run-config.js";

const program = new Command("bench");
registerRunCommand(program);
const run = program.commands.find((c) => c.name() === "run") as Command;
const file = path.join(mkdtempSync(path.join(os.tmpdir(), "bf-run-config-")), "run.yaml");
writeFileSync(file, "tasks_dir: tasks/half-life\nagent: opencode\ntrials: 4\nagent_env: {A: '1'}\n");

describe("expandRunConfig", () => {
  it("puts the file's flags before the command line's, and its task only where none is typed", () => {
    assert.deepEqual(expandRunConfig(["node", "bench", "run", "--config", file, "--trials", "2"], run), [
      "node",
      "bench",
      "run",
      "tasks/half-life",
      "--agent",
      "opencode",
      "--trials",
      "4",
      "--agent-env",
      "A=1",
      "--trials",
      "2",
    ]);
    const typed = expandRunConfig(
      ["node", "bench", "run", "-a", "nop", "tasks/hello", `--config=${file}`],
      run,
    );
    assert.ok(!typed.includes("tasks/half-life"), "the typed task wins");
    assert.equal(typed.at(-1), "tasks/hello");
  });

  it("leaves every other command alone, even with a folder named run", () => {
    const argv = ["node", "bench", "view", "run", "--config", file, "--tasks-dir", "x"];
    assert.deepEqual(expandRunConfig(argv, run), argv);
  });
});
