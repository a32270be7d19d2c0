// `bench results [JOBS_DIR]`: the run and group summaries in the terminal (src/view), or --json.
import type { Command } from "commander";
import { messageOf } from "../errors.js";
import { loadRunSummary } from "../view/model/run-summary.js";
import { exitCodeOf } from "./errors.js";
import { withHelp } from "./help.js";
import { RESULTS_HELP, SUMMARY_GROUP_BY_HELP } from "./help-pages.js";
import { resultsText } from "./results-table.js";

export function registerResultsCommand(program: Command): void {
  const cmd = program
    .command("results")
    .description("print a run's summary, its jobs and its groups (rewards, advantages, outcomes)")
    .argument("[jobs-dir]", "the jobs folder (or one job or trial-NN folder in it)", "jobs")
    .option("--group-by <keys>", SUMMARY_GROUP_BY_HELP)
    .option("--advantage <name>", "grpo or loo", "grpo")
    .option("--json", "print the numbers as JSON")
    .action(async (jobsDir: string, o: { groupBy?: string; advantage: string; json?: boolean }) => {
      try {
        const s = await loadRunSummary(jobsDir, { groupBy: o.groupBy, advantage: o.advantage });
        process.stdout.write(o.json ? `${JSON.stringify(s, null, 2)}\n` : resultsText(s));
      } catch (err) {
        process.stderr.write(`bench results: ${messageOf(err)}\n`);
        process.exitCode = exitCodeOf(err);
      }
    });
  withHelp(cmd, RESULTS_HELP);
}
