#!/usr/bin/env node
// The `bench` command: parse flags, call the library, print. Nothing here decides behaviour.
import { Command } from "commander";
import { nameFlags } from "../options.js";
import { reportError } from "./errors.js";
import { registerRunCommand } from "./run.js";
import { registerSandboxCommands } from "./sandbox.js";
import { registerPolicyCommands } from "./scripted-policy.js";
import { registerTasksCommands } from "./tasks.js";
import { registerTrainCommands } from "./train.js";

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
  return program;
}

async function main(): Promise<void> {
  // Library errors name this command's flags (--trials), not the library's options (trials).
  nameFlags();
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

await main();
