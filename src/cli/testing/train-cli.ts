// `bench train ...` as its own process, for tests and benchmarks, until the main CLI is in reach:
//   node --import tsx src/cli/testing/train-cli.ts convert JOBS --out FILE
import { Command } from "commander";
import { reportError } from "../errors.js";
import { nameFlags } from "../option-flags.js";
import { registerTrainCommands } from "../train/index.js";

// As src/cli/main.ts: this process is the command, so errors name its flags.
nameFlags();

const program = new Command("bench").exitOverride();
registerTrainCommands(program);
try {
  await program.parseAsync(["train", ...process.argv.slice(2)], { from: "user" });
} catch (err) {
  process.exitCode = reportError(err);
}
