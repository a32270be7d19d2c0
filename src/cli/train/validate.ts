// `bench train validate FILE`: every row checked (roles, tool calls matched to declared tools and to
// their results), and with --source-jobs the rollouts behind the rows; one summary line, as upstream's.
import { promises as fs } from "node:fs";
import type { Command } from "commander";
import { UserInputError } from "../../errors.js";
import { checkBranchRow } from "../../train/branch-tree/validate.js";
import { validationTokenizerOf } from "../../train/tokenizer/options.js";
import { checkSource } from "../../train/validate/source.js";
import { TokenizationCheck } from "../../train/validate/tokenization.js";
import { type RowFormat, validateFile } from "../../train/validate/validate.js";
import { pyJson } from "../../util/py-json.js";
import { withHelp } from "../help.js";
import { VALIDATE_HELP } from "../help-pages.js";
import { numberFlag } from "../options.js";
import { trainAction } from "./action.js";
import { TOKENIZER_HELP, tokenizerFlags } from "./flags.js";

type ValidateFlags = Record<string, string | boolean | undefined>;

export function registerValidate(train: Command): void {
  const validate = train
    .command("validate")
    .description("Check every row: roles, tool calls matched to declared tools and to their results")
    .argument("<file>", "a JSONL file of rows")
    .option("--format <format>", "prime-sft, trl-sft, tokens or branch-tree")
    .option("--require-tool-calls", "fail when any row has no tool call")
    .option("--expected-rows <n>", "fail unless exactly this many rows")
    // Checks of the rollouts behind the rows (upstream's flags).
    .option("--source-jobs <dir>", "add source_health: the rollouts the rows came from")
    .option("--source-canonical-selection <file>", "the canonical-selection.json the rows were made with")
    .option("--task-manifest <file>", "add task_manifest_rows: the tasks of a task manifest")
    .option(
      "--require-llm-trajectory",
      "with --source-jobs: fail when a rollout's llm_trajectory.jsonl is missing or malformed",
    )
    .option(
      "--require-training-grade",
      "tokens rows with --source-jobs: fail when a source rollout was masked (no trusted token ids)",
    )
    .option("--tokenizer <tokenizer>", `trl-sft: render and tokenize every row; ${TOKENIZER_HELP}`)
    .option("--tokenizer-revision <rev>", "the cache ref or commit of --tokenizer")
    .option("--max-length <n>", "trl-sft with --tokenizer: fail a row longer than this many tokens")
    .action((file: string, o: ValidateFlags) => trainAction("validate", () => validateCommand(file, o)));
  withHelp(validate, VALIDATE_HELP);
}

async function validateCommand(file: string, o: ValidateFlags): Promise<number> {
  const stat = await fs.stat(file).catch(() => null);
  if (!stat?.isFile()) throw new UserInputError(`${file}: no such file. Give the JSONL file convert wrote.`);
  const branchTree = o.format === "branch-tree";
  const flags = tokenizerFlags(o);
  const tokenizer = await validationTokenizerOf(o.format as RowFormat | undefined, flags);
  const report = await validateFile(file, {
    format: branchTree ? undefined : (o.format as RowFormat | undefined),
    checkRow: branchTree ? checkBranchRow : undefined,
    tokenization: tokenizer ? new TokenizationCheck(tokenizer, flags.maxLength ?? null) : null,
    requireToolCalls: o.requireToolCalls === true,
    expectedRows: numberFlag("--expected-rows", o.expectedRows as string | undefined, {
      integer: true,
      min: 0,
    }),
  });
  const source = await checkSource({
    sourceJobs: o.sourceJobs as string | undefined,
    sourceCanonicalSelection: o.sourceCanonicalSelection as string | undefined,
    taskManifest: o.taskManifest as string | undefined,
    requireToolCalls: o.requireToolCalls === true,
    requireLlmTrajectory: o.requireLlmTrajectory === true,
    tokens: o.format === "tokens",
    requireTrainingGrade: o.requireTrainingGrade === true,
  });
  Object.assign(report, source.fields);
  if (source.problems.length > 0) {
    report.ok = false;
    report.errors = [...(report.errors ?? []), ...source.problems.map((message) => ({ row: 0, message }))];
  }
  const { errors, ...rest } = report;
  // Upstream's trl-sft validator names its format in the line; its prime-sft one does not.
  const summary = o.format === "trl-sft" ? { format: "trl-sft", ...rest } : rest;
  process.stdout.write(`${pyJson(errors ? { ...summary, errors: errors.length } : summary)}\n`);
  for (const n of source.notes) process.stderr.write(`bench train validate: note: ${n}\n`);
  for (const e of errors ?? []) {
    const where = e.line !== undefined ? `${file} line ${e.line}` : file;
    process.stderr.write(`bench train validate: ${where}: ${e.message}\n`);
  }
  return report.ok ? 0 : 1;
}
