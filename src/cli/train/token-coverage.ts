// `bench train token-coverage <job|rollout> [--json]`: which rollouts carry captured token ids and
// logprobs, and which are training-grade. A report: it exits 0 whatever it finds (1 on malformed data).
import type { Command } from "commander";
import { coverageLine, coverageTotal, tokenCoverage } from "../../train/tokens/coverage.js";
import { pyJson } from "../../util/py-json.js";
import { withHelp } from "../help.js";
import { COVERAGE_HELP } from "../help-pages.js";
import { trainAction } from "./action.js";

export function registerTokenCoverage(train: Command): void {
  const coverage = train
    .command("token-coverage")
    .description("Per rollout: calls with captured token ids and logprobs, and whether it is training-grade")
    .argument("<path>", "a rollout folder, a job folder or a folder of jobs")
    .option("--json", "print one JSON object: {rollouts, training_grade_rollouts, per_rollout, ...}")
    .action((input: string, o: { json?: boolean }) =>
      trainAction("token-coverage", async () => {
        const report = await tokenCoverage(input);
        if (o.json) process.stdout.write(`${pyJson(report)}\n`);
        else {
          const lines = [...report.per_rollout.map(coverageLine), coverageTotal(report)];
          process.stdout.write(`${lines.join("\n")}\n`);
        }
        return 0;
      }),
    );
  withHelp(coverage, COVERAGE_HELP);
}
