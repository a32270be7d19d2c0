// `bench train convert | stream | validate`: parse flags, call src/train, print.
import { once } from "node:events";
import { promises as fs } from "node:fs";
import type { Command } from "commander";
import { DataError, messageOf, UserInputError } from "../errors.js";
import type { Normalisation } from "../jobs-dir/groups/advantage.js";
import { BRANCH_TREE_ONLY, BRANCH_TREE_REFUSES, convertBranchTree } from "../train/branch-tree/convert.js";
import { checkBranchRow } from "../train/branch-tree/validate.js";
import { convertLines, textLine } from "../train/console.js";
import { convertJob } from "../train/convert/convert.js";
import type { RowMode } from "../train/convert/rows.js";
import { runSft } from "../train/run-sft/run.js";
import { endCounts, type StreamEnd } from "../train/stream/end.js";
import { streamRollouts } from "../train/stream/stream.js";
import {
  type ContextPolicy,
  type TokenizerFlags,
  validationTokenizerOf,
} from "../train/tokenizer/options.js";
import { checkSource } from "../train/validate/source.js";
import { TokenizationCheck } from "../train/validate/tokenization.js";
import { type RowFormat, validateFile } from "../train/validate/validate.js";
import { floatJson } from "../util/float-json.js";
import { pyJson } from "../util/py-json.js";
import { ExitCode, exitCodeOf } from "./errors.js";
import { withHelp } from "./help.js";
import {
  CONVERT_HELP,
  SFT_HELP,
  STREAM_HELP,
  TRAIN_HELP,
  TRAIN_RUN_HELP,
  VALIDATE_HELP,
} from "./help-pages.js";
import { registerTokenCoverage } from "./train-token-coverage.js";

const GROUP_BY_HELP = "keys from task, agent, model, task_digest, job, policy_version";

function num(
  flag: string,
  value: string | undefined,
  opts: { integer?: boolean; min?: number } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const bad =
    value.trim() === "" ||
    !Number.isFinite(n) ||
    (opts.integer && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min);
  if (bad) {
    const kind = opts.integer ? "a whole number" : "a number";
    throw new UserInputError(
      `${flag}: "${value}" is not ${kind}${opts.min !== undefined ? ` of at least ${opts.min}` : ""}.`,
    );
  }
  return n;
}

/** Runs an action; errors become one line on stderr and the exit code the docs promise. */
async function action(name: string, fn: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await fn();
  } catch (err) {
    // The reader went away (`| head`): not a failure of ours.
    if ((err as NodeJS.ErrnoException).code === "EPIPE") return;
    process.stderr.write(`bench train ${name}: ${messageOf(err)}\n`);
    // convert and validate exit 1 when the data has a problem, as upstream's do; the stream keeps
    // upstream's own table (1 is "the run's process went away" there).
    code = name !== "stream" && err instanceof DataError ? 1 : exitCodeOf(err);
  }
  if (code !== 0) throw new ExitCode(code);
}

const TOKENIZER_HELP = "a folder or tokenizer.json, or a Hugging Face model id in the local HF cache";

/** --tokenizer, --tokenizer-revision, --max-length as convert and validate take them. */
function tokenizerFlags(o: Record<string, unknown>): TokenizerFlags {
  return {
    tokenizer: o.tokenizer as string | undefined,
    tokenizerRevision: o.tokenizerRevision as string | undefined,
    maxLength: num("--max-length", o.maxLength as string | undefined, { integer: true, min: 1 }),
  };
}

async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, "drain");
}

// `bench train convert --format branch-tree`: rows of the branch trees of each group.
const camel = (flag: string) => flag.slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
/** Whether the user typed the flag (a default is not a choice). */
const fromCli = (cmd: Command, flag: string) => cmd.getOptionValueSource(camel(flag)) === "cli";

async function branchTreeConvert(jobs: string, o: Record<string, string | undefined>, cmd: Command) {
  if (o.format !== "branch-tree") {
    const flag = BRANCH_TREE_ONLY.find((f) => fromCli(cmd, f));
    throw new UserInputError(`${flag} applies only to --format branch-tree.`);
  }
  const refused = BRANCH_TREE_REFUSES.find((f) => fromCli(cmd, f));
  if (refused) throw new UserInputError(`--format branch-tree does not take ${refused}.`);
  const out = o.out as string;
  const res = await convertBranchTree({
    jobs,
    out,
    groupBy: o.groupBy,
    pairs: fromCli(cmd, "--pairs"),
    pairsAnyRequest: fromCli(cmd, "--pairs-any-request"),
    includeOracle: fromCli(cmd, "--include-oracle"),
    minReward: num("--min-reward", o.minReward),
    expectedRows: num("--expected-rows", o.expectedRows, { integer: true, min: 0 }),
    manifest: o.manifest,
    onWarning: (m) => process.stderr.write(`bench train convert: warning: ${m}\n`),
  });
  process.stdout.write(
    `Converted ${res.rows} row(s) from ${res.rollouts} rollout(s) -> ${out}\n` +
      `Branch trees: ${res.trees}; ${res.forks} fork(s), ${res.childRows} child row(s), ${res.pairRows} pair row(s); ` +
      `${res.groupsWithoutFork} group(s) without a fork.\n`,
  );
  if (res.trees === 0 && res.singleRolloutGroups > 0 && res.groupBy.includes("job"))
    process.stderr.write(
      "bench train convert: warning: every group has one rollout; each trial-NN is a job of its own: " +
        "leave job out of --group-by (for example --group-by task,agent,model)\n",
    );
  return 0;
}

export function registerTrainCommands(program: Command): Command {
  const train = program
    .command("train")
    .description("Turn rollouts into training data: rows with group advantages, a live stream, checks");
  withHelp(train, TRAIN_HELP);

  const convert = train
    .command("convert")
    .description(
      "Write one training row per rollout (or per model call) from a job, a folder of jobs or a rollout",
    )
    .argument(
      "<jobs>",
      "a rollout folder, a job folder, a folder of jobs, or a results.jsonl / trainer JSONL",
    )
    .requiredOption("-o, --out <file>", "the JSONL file to write")
    .option("--format <format>", "prime-sft, trl-sft, tokens or branch-tree", "prime-sft")
    .option("--row-mode <mode>", "rollout (the last model call) or exchange (every model call)", "rollout")
    .option("--group-advantage <kind>", "add advantages and a group block: grpo or loo")
    .option("--group-by <keys>", GROUP_BY_HELP, "task,agent,model,job")
    .option(
      "--min-reward <x>",
      "write rows only for rollouts with at least this reward (after the advantages)",
    )
    .option("--manifest <file>", "write counts by reason and every group with its members")
    .option("--expected-rows <n>", "fail, writing nothing, unless exactly this many rows come out")
    .option(
      "--upstream-rows",
      "read each model call exactly as upstream's converter does (it drops Anthropic tool calls, system prompts and tool schemas)",
    )
    // Upstream's selection and signal flags (issue 13).
    .option("--canonical-selection <file>", "convert only the rollouts a canonical-selection.json selects")
    .option(
      "--reward-vector",
      "add reward_vector (every number the verifier wrote); with groups, advantage_vector",
    )
    .option("--subagent-rows", "also write Claude Code subagents' calls as rows (agent_role subagent)")
    .option(
      "--context-policy <policy>",
      "trl-sft: full, or message-window (needs --tokenizer and --max-length)",
    )
    .option("--tokenizer <tokenizer>", `trl-sft message-window: ${TOKENIZER_HELP}`)
    .option("--tokenizer-revision <rev>", "the cache ref or commit of --tokenizer")
    .option("--max-length <n>", "trl-sft message-window: the most tokens a row may have")
    .option("--redact", "replace secrets in row content with ***REDACTED***")
    .option(
      "--no-redact",
      "keep row content as recorded (private data only); tokens rows with secrets are kept",
    )
    .option("--pairs", "branch-tree: also write a preference pair for each two rollouts that part at a fork")
    .option("--pairs-any-request", "branch-tree: pairs also where the two requests differ")
    .option("--include-oracle", "branch-tree: let oracle rollouts into the trees")
    .action((jobs: string, o: Record<string, string | undefined>, cmd: Command) =>
      action("convert", async () => {
        if (o.format === "branch-tree" || BRANCH_TREE_ONLY.some((f) => fromCli(cmd, f)))
          return branchTreeConvert(jobs, o, cmd);
        const out = o.out as string;
        const res = await convertJob({
          jobs,
          out,
          format: o.format as RowFormat,
          rowMode: o.rowMode as RowMode,
          groupAdvantage: o.groupAdvantage as Normalisation | undefined,
          groupBy: o.groupBy,
          minReward: num("--min-reward", o.minReward),
          manifest: o.manifest,
          expectedRows: num("--expected-rows", o.expectedRows, { integer: true, min: 0 }),
          canonicalSelection: o.canonicalSelection,
          rewardVector: Boolean(o.rewardVector),
          subagentRows: Boolean(o.subagentRows),
          keepGroups: false,
          upstreamRows: (o.upstreamRows as unknown) === true,
          contextPolicy: o.contextPolicy as ContextPolicy | undefined,
          ...tokenizerFlags(o),
          redact: (o.redact as unknown) !== false,
          onWarning: (m) => process.stderr.write(`bench train convert: warning: ${m}\n`),
        });
        process.stdout.write(`${convertLines(res, out).join("\n")}\n`);
        const notGrade = res.manifest.not_training_grade;
        if (notGrade.length > 0) {
          const first = notGrade[0] as { rollout_dir: string; reason: string };
          process.stderr.write(
            `bench train convert: warning: ${notGrade.length} rollout(s) are not training-grade and gave no row ` +
              `(${first.rollout_dir}: ${first.reason}); --manifest lists them all\n`,
          );
        }
        const secrets = res.manifest.secrets_in_tokens;
        if (secrets.length > 0) {
          const first = secrets[0] as { rollout_dir: string; reason: string };
          process.stderr.write(
            `bench train convert: warning: ${secrets.length} tokens row(s) left out: their text holds a secret and ` +
              `token ids cannot be redacted (${first.rollout_dir}: ${first.reason}); --no-redact keeps them\n`,
          );
        }
        return 0;
      }),
    );
  withHelp(convert, CONVERT_HELP);

  const stream = train
    .command("stream")
    .description("Print one JSON record per rollout as rollouts finish, already-finished ones first")
    .argument("<path>", "a job folder or a folder of jobs (it may not exist yet)")
    .option("--follow", "keep watching until every planned job has finished")
    .option("--no-follow", "scan once and stop")
    .option(
      "--group-size <n>",
      "hold a group's rollouts until n have finished, then print them with advantages",
    )
    .option("--group-by <keys>", GROUP_BY_HELP, "task,agent,model,job")
    .option("--group-advantage <kind>", "grpo or loo", "grpo")
    .option("--poll-interval <seconds>", "how often to look when file-system events are missed", "1")
    .option("--timeout <seconds>", "stop after this long (exit 3)")
    .option("--format <format>", "jsonl or text", "jsonl")
    .action((input: string, o: Record<string, string | boolean | undefined>) =>
      action("stream", async () => {
        const format = o.format as string;
        if (format !== "jsonl" && format !== "text")
          throw new UserInputError(`--format: use jsonl or text, not "${format}".`);
        const timeout = num("--timeout", o.timeout as string | undefined, { min: 0 });
        const controller = new AbortController();
        // A reader that went away (a closed pipe) ends the stream quietly.
        const onError = () => controller.abort();
        process.stdout.once("error", onError);
        let n = 0;
        let end: StreamEnd | null = null;
        try {
          const records = streamRollouts(input, {
            follow: o.follow !== false,
            groupSize: num("--group-size", o.groupSize as string | undefined, { integer: true, min: 1 }),
            groupBy: o.groupBy as string,
            groupAdvantage: o.groupAdvantage as Normalisation,
            pollIntervalMs: (num("--poll-interval", o.pollInterval as string, { min: 0.01 }) ?? 1) * 1000,
            timeoutMs: timeout === undefined ? undefined : timeout * 1000,
            signal: controller.signal,
            onWarning: (m) => process.stderr.write(`bench train stream: warning: ${m}\n`),
            onEnd: (e) => {
              end = e;
            },
          });
          for await (const r of records) {
            if (controller.signal.aborted) break;
            await writeOut(format === "text" ? `${textLine(r)}\n` : `${floatJson(r)}\n`);
            n++;
          }
        } finally {
          process.stdout.off("error", onError);
          const counts = end ? `; ${endCounts(end)}` : "";
          process.stderr.write(`bench train stream: ${n} rollouts streamed${counts}\n`);
        }
        return 0;
      }),
    );
  withHelp(stream, STREAM_HELP);

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
    .option("--tokenizer <tokenizer>", `trl-sft: render and tokenize every row; ${TOKENIZER_HELP}`)
    .option("--tokenizer-revision <rev>", "the cache ref or commit of --tokenizer")
    .option("--max-length <n>", "trl-sft with --tokenizer: fail a row longer than this many tokens")
    .action((file: string, o: Record<string, string | boolean | undefined>) =>
      action("validate", async () => {
        const stat = await fs.stat(file).catch(() => null);
        if (!stat?.isFile())
          throw new UserInputError(`${file}: no such file. Give the JSONL file convert wrote.`);
        const branchTree = o.format === "branch-tree";
        const flags = tokenizerFlags(o);
        const tokenizer = await validationTokenizerOf(o.format as RowFormat | undefined, flags);
        const report = await validateFile(file, {
          format: branchTree ? undefined : (o.format as RowFormat | undefined),
          checkRow: branchTree ? checkBranchRow : undefined,
          tokenization: tokenizer ? new TokenizationCheck(tokenizer, flags.maxLength ?? null) : null,
          requireToolCalls: o.requireToolCalls === true,
          expectedRows: num("--expected-rows", o.expectedRows as string | undefined, {
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
        });
        Object.assign(report, source.fields);
        if (source.problems.length > 0) {
          report.ok = false;
          report.errors = [
            ...(report.errors ?? []),
            ...source.problems.map((message) => ({ row: 0, message })),
          ];
        }
        const { errors, ...rest } = report;
        // Upstream's trl-sft validator names its format in the line; its prime-sft one does not.
        const summary = o.format === "trl-sft" ? { format: "trl-sft", ...rest } : rest;
        process.stdout.write(`${pyJson(errors ? { ...summary, errors: errors.length } : summary)}\n`);
        for (const e of errors ?? []) {
          const where = e.line !== undefined ? `${file} line ${e.line}` : file;
          process.stderr.write(`bench train validate: ${where}: ${e.message}\n`);
        }
        return report.ok ? 0 : 1;
      }),
    );
  withHelp(validate, VALIDATE_HELP);
  registerTokenCoverage(train, action);

  // `bench train run sft --backend prime-rl`: upstream's trainer launcher (train-run.json, command.txt).
  const collect = (v: string, prev: string[] = []) => [...prev, v];
  const trainRun = train.command("run").description("Launch a trainer on training rows and record the run");
  withHelp(trainRun, TRAIN_RUN_HELP);
  const sft = trainRun
    .command("sft")
    .description("Run Prime-RL SFT (`uv run sft @ CONFIG ...`) and write <work-dir>/train-run.json")
    .requiredOption(
      "--config <file>",
      "Prime-RL SFT TOML config (relative paths also tried in --prime-rl-dir)",
    )
    .option("--backend <backend>", "training backend: prime-rl", "prime-rl")
    .option("--data <data>", "a prime-sft JSONL, a dataset folder, or a dataset name; passed as --data.name")
    .option("--output-dir <dir>", "Prime-RL's output dir")
    .option("--work-dir <dir>", "where train-run.json, command.txt and the logs go", "train-runs/sft")
    .option("--prime-rl-dir <dir>", "the Prime-RL checkout to run uv from")
    .option("--dry-run", "pass --dry-run through to Prime-RL")
    .option("--follow", "also print the trainer's stdout while logging it")
    .option("--uv-no-sync", "run `uv run --no-sync`")
    .option(
      "--override <KEY=VALUE>",
      "a Prime-RL config override, passed as --KEY VALUE; repeatable",
      collect,
    )
    .option("--target-examples <n>", "max_steps = ceil(n / data.batch_size)")
    .option("--target-micro-steps <n>", "max_steps = floor(n / data.batch_size)")
    .option("--sync-scheduler-to-max-steps", "with a target, also set scheduler.decay_steps")
    .option("--no-sync-scheduler-to-max-steps", "leave scheduler.decay_steps alone")
    .option("--sync-ckpt-to-max-steps", "with a target, also set ckpt.interval and ckpt.keep_interval")
    .option("--no-sync-ckpt-to-max-steps", "leave the checkpoint interval alone (the default)")
    .option("--pack-function <fn>", "data.pack_function: cat or stack")
    .option("--loss-mask <roles>", "assistant, all, or roles joined by commas (data.loss_mask.*)")
    .option(
      "--loss-normalization <kind>",
      "token_mean (Prime-RL's own); sample_mean is checked as upstream does, then refused",
    )
    .option("--model-attn <impl>", "model.attn, e.g. sdpa")
    .option("--renderer-mode <mode>", "none: renderer=None (tokenizer chat template)")
    .option("--tool-defs-mode <mode>", "preserve or omit (drop tool_defs/tools from local rows)", "preserve")
    .option(
      "--chat-template-kwarg <KEY=VALUE>",
      "set in every local row's chat_template_kwargs; repeatable",
      collect,
    )
    .option("--message-tail-truncation <mode>", "off (the only mode supported here)", "off")
    .option("--allow-unsafe-stack-flash-attn", "allow stack packing with Qwen3.5 and flash attention")
    .option("--force", "overwrite an existing <work-dir>/train-run.json")
    .option("--compat-profile <name>", "env0-mobile300-pr828: checked as upstream does, then refused")
    .option("--publish-model <repo>", "not supported here")
    .option("--model-tag <tag>", "not supported here")
    .option("--model-card <mode>", "not supported here")
    .option("--publish-artifacts <repo>", "not supported here")
    .option("--hf-prefix <prefix>", "not supported here")
    .option("--hf-public-read-check", "not supported here")
    .action((o: Record<string, string | string[] | boolean | undefined>) =>
      action("run sft", async () => {
        if (o.backend !== "prime-rl")
          throw new UserInputError(`--backend: only prime-rl is supported, not "${o.backend}".`);
        const str = (v: unknown) => v as string | undefined;
        const res = await runSft({
          config: o.config as string,
          workDir: o.workDir as string,
          data: str(o.data),
          outputDir: str(o.outputDir),
          primeRlDir: str(o.primeRlDir),
          dryRun: o.dryRun === true,
          uvNoSync: o.uvNoSync === true,
          overrides: (o.override as string[] | undefined) ?? [],
          // Not an integer: a usage error (2), as upstream's parser says; 0 or less: its refusal (1).
          targetExamples: num("--target-examples", str(o.targetExamples), { integer: true }),
          targetMicroSteps: num("--target-micro-steps", str(o.targetMicroSteps), { integer: true }),
          syncSchedulerToMaxSteps: o.syncSchedulerToMaxSteps !== false,
          syncCkptToMaxSteps: o.syncCkptToMaxSteps === true,
          packFunction: str(o.packFunction),
          lossMask: str(o.lossMask),
          lossNormalization: str(o.lossNormalization),
          modelAttn: str(o.modelAttn),
          rendererMode: str(o.rendererMode),
          toolDefsMode: str(o.toolDefsMode),
          chatTemplateKwargs: (o.chatTemplateKwarg as string[] | undefined) ?? [],
          messageTailTruncation: str(o.messageTailTruncation),
          allowUnsafeStackFlashAttn: o.allowUnsafeStackFlashAttn === true,
          force: o.force === true,
          compatProfile: str(o.compatProfile),
          unsupported: {
            "--publish-model": o.publishModel,
            "--model-tag": o.modelTag,
            "--model-card": o.modelCard,
            "--publish-artifacts": o.publishArtifacts,
            "--hf-prefix": o.hfPrefix,
            "--hf-public-read-check": o.hfPublicReadCheck,
          },
          onStdout: o.follow === true ? (chunk) => process.stdout.write(chunk) : undefined,
        });
        if (res.returncode !== 0) {
          process.stderr.write(
            `bench train run sft: Prime-RL SFT failed with exit code ${res.returncode}; see ${res.manifestPath}\n`,
          );
          // A signal (-N) exits as a shell reports it, 128 + N.
          return res.returncode > 0 ? res.returncode : 128 - res.returncode;
        }
        process.stdout.write(`Prime-RL SFT completed (manifest: ${res.manifestPath})\n`);
        return 0;
      }),
    );
  withHelp(sft, SFT_HELP);
  return train;
}
