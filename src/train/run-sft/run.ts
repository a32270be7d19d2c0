// `bench train run sft --backend prime-rl`: check everything, package the data, write
// command.txt and train-run.json (status running), run `uv run sft @ CONFIG ...` from the
// Prime-RL checkout, then record how it ended. Nothing is written before every refusal has had
// its chance, and nothing is launched before the manifest says what is being launched.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { inheritedEnv } from "../../env.js";
import { opt } from "../../options.js";
import { applyCompatProfile } from "./compat.js";
import { chatTemplateKwargs, type DatasetPlan, locateData, prepareData, toolDefsMode } from "./dataset.js";
import { installHint, launch, onPath } from "./launch.js";
import { commandLine, recordedEnvKeys, type TrainRunManifest, utcNow, writeManifest } from "./manifest.js";
import {
  type ExposurePlan,
  exposurePlan,
  lossNormalization,
  overrideArgs,
  type PlanFlags,
  type TomlTable,
} from "./plan.js";
import { SftRefusal } from "./refusal.js";
import { checkTailTruncation, tailMode } from "./tail.js";

export interface RunSftOptions extends Omit<PlanFlags, "overrides"> {
  config: string;
  workDir: string;
  data?: string;
  outputDir?: string;
  /** The Prime-RL checkout `uv run` runs in; the current directory when not given. */
  primeRlDir?: string;
  dryRun: boolean;
  uvNoSync: boolean;
  overrides?: readonly string[];
  lossNormalization?: string;
  toolDefsMode?: string;
  chatTemplateKwargs?: readonly string[];
  messageTailTruncation?: string;
  /** Upstream's preset (env0-mobile300-pr828 and its aliases): checked, then refused (see below). */
  compatProfile?: string;
  force: boolean;
  /**
   * Upstream options this port does not carry out, by name (publishModel, modelTag, modelCard,
   * publishArtifacts, hfPrefix, hfPublicReadCheck): given, so the refusal can say which.
   */
  unsupported?: Record<string, unknown>;
  /** The environment the trainer gets and `uv` is looked up in; the inherited one by default. */
  env?: NodeJS.ProcessEnv;
  /** Where relative paths start; process.cwd() by default. */
  cwd?: string;
  onStdout?: (chunk: Buffer) => void;
}

export interface RunSftResult {
  manifestPath: string;
  commandPath: string;
  returncode: number;
  manifest: TrainRunManifest;
}

/** Like Python's Path.resolve(): absolute, with the symlinks of the part that exists resolved. */
async function resolveReal(p: string): Promise<string> {
  const abs = path.resolve(p);
  const real = await fs.realpath(abs).catch(() => null);
  if (real !== null) return real;
  const parent = path.dirname(abs);
  return parent === abs ? abs : path.join(await resolveReal(parent), path.basename(abs));
}

async function isFile(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => null))?.isFile() ?? false;
}

/** A relative --config is looked for where the user is, then in the Prime-RL checkout. */
async function resolveConfig(config: string, cwd: string, primeRlDir: string | undefined): Promise<string> {
  const here = path.resolve(cwd, config);
  if (await isFile(here)) return fs.realpath(here);
  if (primeRlDir !== undefined && !path.isAbsolute(config)) {
    const there = path.join(primeRlDir, config);
    if (await isFile(there)) return fs.realpath(there);
  }
  throw new SftRefusal(`${opt("config")} not found: ${config}`);
}

async function loadToml(file: string): Promise<TomlTable> {
  try {
    return parseToml(await fs.readFile(file, "utf8")) as TomlTable;
  } catch (err) {
    throw new Error(`${file}: not a valid TOML config (${(err as Error).message.split("\n")[0]}).`);
  }
}

/**
 * What upstream carries out with a run-local Python shim inside Prime-RL (sample-mean loss,
 * pre-tokenized rows), a tokenizer (tail truncation) or Hugging Face uploads: refused by name
 * rather than half done. Called after every check upstream makes of these flags, so a combination
 * upstream refuses is refused with upstream's words first.
 */
function refuseUnsupported(o: RunSftOptions): void {
  const why = (option: string, what: string) =>
    new SftRefusal(`${option} is not supported by this bench (${what}); see docs/export-training-data.md.`);
  if (o.compatProfile !== undefined)
    throw why(
      opt("compatProfile", o.compatProfile),
      "it trains on rows pre-tokenized with the model's tokenizer and a per-row mean loss, both " +
        "through upstream's run-local Prime-RL shim",
    );
  if (lossNormalization(o.lossNormalization) === "sample_mean")
    throw why(
      opt("lossNormalization", "sample_mean"),
      "upstream replaces Prime-RL's token-mean SFT loss with a run-local sitecustomize shim " +
        "(PYTHONPATH=<work-dir>/prime-rl-sft-compat-shim, BENCHFLOW_PRIME_RL_SAMPLE_MEAN_LOSS=1); " +
        "token_mean is Prime-RL's own",
    );
  const tail = tailMode(o.messageTailTruncation);
  if (tail !== "off") throw why(opt("messageTailTruncation", tail), "it needs the model's tokenizer");
  for (const [option, value] of Object.entries(o.unsupported ?? {}))
    if (value !== undefined && value !== false) throw why(opt(option), "not carried over from upstream");
}

function trainerArgv(o: {
  uvNoSync: boolean;
  config: string;
  data: string | null;
  outputDir: string;
  dryRun: boolean;
  overrides: string[];
}): string[] {
  return [
    "uv",
    "run",
    ...(o.uvNoSync ? ["--no-sync"] : []),
    "sft",
    "@",
    o.config,
    ...(o.data ? ["--data.name", o.data] : []),
    "--output-dir",
    o.outputDir,
    ...(o.dryRun ? ["--dry-run"] : []),
    ...overrideArgs(o.overrides),
  ];
}

function initialManifest(a: {
  config: string;
  workDir: string;
  outputDir: string;
  dryRun: boolean;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  exposure: ExposurePlan | null;
  dataset: DatasetPlan | null;
}): TrainRunManifest {
  const now = utcNow();
  const extra: Record<string, unknown> = {};
  if (a.exposure) extra.prime_rl_sft_exposure_plan = a.exposure;
  if (a.dataset) extra.prime_rl_sft_dataset = a.dataset;
  return {
    schema_version: 1,
    run_type: "sft",
    backend: "prime-rl",
    config: a.config,
    work_dir: a.workDir,
    output_dir: a.outputDir,
    dry_run: a.dryRun,
    created_at: now,
    updated_at: now,
    overall_status: "running",
    commands: [{ id: "prime-rl-sft", argv: a.argv, cwd: a.cwd, env_keys: recordedEnvKeys(a.env) }],
    components: [
      {
        name: "trainer",
        role: "primary",
        command_id: "prime-rl-sft",
        status: "running",
        logs: ["prime-rl/stdout.log", "prime-rl/stderr.log"],
        metrics: [],
        checkpoints: [],
        extra: {},
      },
    ],
    artifacts: { checkpoints: [], exported_models: [] },
    extra,
  };
}

export async function runSft(asked: RunSftOptions): Promise<RunSftResult> {
  const o = applyCompatProfile(asked, asked.compatProfile);
  const env = o.env ?? inheritedEnv();
  const cwd = o.cwd ?? process.cwd();
  const { primeRlDir, config, overrides, exposure, tools, kwargs } = await checked(o, cwd);

  const workDir = await resolveReal(path.resolve(cwd, o.workDir));
  const outputDir = o.outputDir
    ? await resolveReal(path.resolve(cwd, o.outputDir))
    : path.join(workDir, "prime-rl-output");
  const manifestPath = path.join(workDir, "train-run.json");
  if (!o.force && (await fs.stat(manifestPath).catch(() => null)))
    throw new SftRefusal(`${manifestPath} already exists; pass ${opt("force")} to overwrite.`);
  if ((await onPath("uv", env)) === null)
    throw new Error(`uv is required to launch Prime-RL SFT and is not on PATH: ${installHint()}.`);

  const logDir = path.join(workDir, "prime-rl");
  await fs.mkdir(logDir, { recursive: true });
  const { data, plan: dataset } = await prepareData({
    data: o.data,
    cwd,
    toolDefsMode: tools,
    chatTemplateKwargs: kwargs,
    workDir,
  });
  const argv = trainerArgv({
    uvNoSync: o.uvNoSync,
    config,
    data,
    outputDir,
    dryRun: o.dryRun,
    overrides: [...overrides, ...(exposure?.generated_overrides ?? [])],
  });
  const commandPath = path.join(workDir, "command.txt");
  await fs.writeFile(commandPath, `${commandLine(argv)}\n`);
  const launchCwd = primeRlDir ?? (await fs.realpath(cwd));
  const manifest = initialManifest({
    config,
    workDir,
    outputDir,
    dryRun: o.dryRun,
    argv,
    cwd: launchCwd,
    env,
    exposure,
    dataset,
  });
  await writeManifest(manifestPath, manifest);

  const { returncode, error } = await launch({
    argv,
    cwd: launchCwd,
    env,
    stdoutLog: path.join(logDir, "stdout.log"),
    stderrLog: path.join(logDir, "stderr.log"),
    onStdout: o.onStdout,
  });
  const trainer = manifest.components[0] as TrainRunManifest["components"][number];
  manifest.overall_status = returncode === 0 ? "succeeded" : "failed";
  trainer.status = manifest.overall_status;
  if (returncode !== 0) trainer.extra.returncode = returncode;
  if (error !== undefined) trainer.extra.error = error;
  await writeManifest(manifestPath, manifest);
  return { manifestPath, commandPath, returncode, manifest };
}

/**
 * Every refusal of the options, config and data, in upstream's order, before anything is written:
 * what the run then needs of them.
 */
async function checked(o: RunSftOptions, cwd: string) {
  let primeRlDir: string | undefined;
  if (o.primeRlDir !== undefined) {
    const dir = path.resolve(cwd, o.primeRlDir);
    if (!(await fs.stat(dir).catch(() => null))?.isDirectory())
      throw new SftRefusal(`${opt("primeRlDir")} not found: ${o.primeRlDir}`);
    primeRlDir = await fs.realpath(dir);
  }
  const config = await resolveConfig(o.config, cwd, primeRlDir);
  const configData = await loadToml(config);
  const overrides = [...(o.overrides ?? [])];
  const exposure = exposurePlan({ ...o, overrides }, configData);
  const tools = toolDefsMode(o.toolDefsMode ?? "preserve");
  const kwargs = chatTemplateKwargs(o.chatTemplateKwargs ?? []);
  const tail = tailMode(o.messageTailTruncation);
  checkTailTruncation(tail, { toolDefsMode: tools, chatTemplateKwargs: kwargs, overrides }, configData);
  await locateData({
    data: o.data,
    cwd,
    toolDefsMode: tools,
    chatTemplateKwargs: kwargs,
    messageTailTruncation: tail,
  });
  refuseUnsupported(o);
  return { primeRlDir, config, overrides, exposure, tools, kwargs };
}
