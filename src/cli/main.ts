#!/usr/bin/env node
// The `bench` command: parse flags, call the library, print. Nothing here decides behaviour.
import { Command } from "commander";
import { reportError } from "./errors.js";
// issue 15: see a run
import { registerResultsCommand } from "./results.js";
import { registerRunCommand } from "./run.js";
import { registerSandboxCommands } from "./sandbox.js";
import { registerPolicyCommands } from "./scripted-policy.js";
import { registerTasksCommands } from "./tasks.js";
import { registerTrainCommands } from "./train.js";
import { registerViewCommand } from "./view.js";

function buildProgram(): Command {
  const program = new Command("bench")
    .description("BenchFlow: tasks as reinforcement-learning environments")
    .version("0.1.0")
    .showHelpAfterError()
    .exitOverride();
  registerRunCommand(program);
  registerTasksCommands(program);
  registerPolicyCommands(program);
  registerSandboxCommands(program);
  registerTrainCommands(program);
  // issue 15: see a run
  registerViewCommand(program);
  registerResultsCommand(program);
  return program;
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

await main();
