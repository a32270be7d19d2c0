// `bench _trial SPEC.json` (hidden): what a SLURM job runs on its node, also reachable from the CLI
// (job/slurm/node.ts; the job itself starts the lighter src/cli/trial-entry.ts).
import type { Command } from "commander";
import { runRolloutOnNode } from "../job/slurm/node.js";
import { ExitCode } from "./errors.js";

export function registerRolloutNodeCommand(program: Command): void {
  program
    .command("_trial", { hidden: true })
    .argument("<spec>", "the trial spec the submitting host wrote")
    .action(async (specFile: string) => {
      const code = await runRolloutOnNode(specFile);
      if (code !== 0) throw new ExitCode(code);
    });
}
