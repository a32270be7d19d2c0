// `bench train run sft --backend prime-rl`: upstream's trainer launcher (train-run.json, command.txt).
import type { Command } from "commander";
import { UserInputError } from "../../errors.js";
import { runSft } from "../../train/run-sft/run.js";
import { withHelp } from "../help.js";
import { SFT_HELP, TRAIN_RUN_HELP } from "../help-pages.js";
import { collect, numberFlag } from "../options.js";
import { trainAction } from "./action.js";

type SftFlags = Record<string, string | string[] | boolean | undefined>;

export function registerRunSft(train: Command): void {
  const trainRun = train.command("run").description("Launch a trainer on training rows and record the run");
  withHelp(trainRun, TRAIN_RUN_HELP);
  const sft = sftOptions(
    trainRun
      .command("sft")
      .description("Run Prime-RL SFT (`uv run sft @ CONFIG ...`) and write <work-dir>/train-run.json"),
  ).action((o: SftFlags) => trainAction("run sft", () => runSftCommand(o)));
  withHelp(sft, SFT_HELP);
}

/** Upstream's flags, in upstream's order (the help lists them so). */
function sftOptions(sft: Command): Command {
  sft
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
    .option("--compat-profile <name>", "env0-mobile300-pr828: checked as upstream does, then refused");
  // Upstream's publishing flags: taken, so that a script that passes one is refused by name.
  for (const flag of UNSUPPORTED) sft.option(flag, "not supported here");
  return sft;
}

const UNSUPPORTED = [
  "--publish-model <repo>",
  "--model-tag <tag>",
  "--model-card <mode>",
  "--publish-artifacts <repo>",
  "--hf-prefix <prefix>",
  "--hf-public-read-check",
] as const;

async function runSftCommand(o: SftFlags): Promise<number> {
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
    targetExamples: numberFlag("--target-examples", str(o.targetExamples), { integer: true }),
    targetMicroSteps: numberFlag("--target-micro-steps", str(o.targetMicroSteps), { integer: true }),
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
      publishModel: o.publishModel,
      modelTag: o.modelTag,
      modelCard: o.modelCard,
      publishArtifacts: o.publishArtifacts,
      hfPrefix: o.hfPrefix,
      hfPublicReadCheck: o.hfPublicReadCheck,
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
}
