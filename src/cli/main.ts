#!/usr/bin/env node
// The `bench` command: parse flags, call the library, print. Nothing here decides behaviour.
import { Command } from "commander";
import { ignoreClosedStdout, reportError } from "./errors.js";
import { withHelp } from "./help.js";
import { ROOT_HELP } from "./help-pages.js";
import { nameFlags } from "./option-flags.js";
import { finishProgram } from "./program.js";
import { registerResultsCommand } from "./results.js";
import { registerRolloutNodeCommand } from "./rollout-node.js";
import { registerRunCommand } from "./run.js";
import { expandRunConfig } from "./run-config.js";
import { registerSandboxCommands } from "./sandbox.js";
import { registerPolicyCommands } from "./scripted-policy.js";
import { registerTasksCommands } from "./tasks.js";
import { registerTrainCommands } from "./train/index.js";
import { registerViewCommand } from "./view.js";

function buildProgram(): Command {
  const program = new Command("bench")
    .description("BenchFlow: tasks as reinforcement-learning environments")
    .version("0.1.0");
  withHelp(program, ROOT_HELP);
  registerRunCommand(program);
  registerTasksCommands(program);
  registerPolicyCommands(program);
  registerSandboxCommands(program);
  registerTrainCommands(program);
  registerRolloutNodeCommand(program);
  registerViewCommand(program);
  registerResultsCommand(program);
  // Last: the shared help and error style, for every command registered above.
  return finishProgram(program);
}

async function main(): Promise<void> {
  ignoreClosedStdout();
  // Library errors name this command's flags (--trials), not the library's options (trials).
  nameFlags();
  try {
    const program = buildProgram();
    const run = program.commands.find((c) => c.name() === "run");
    // upstream's --config FILE: its keys become flags the command line's own flags override.
    await program.parseAsync(run ? expandRunConfig(process.argv, run) : process.argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

await main();
