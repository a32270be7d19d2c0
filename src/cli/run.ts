// `bench run TASK_OR_DIR -a AGENT ...`: a thin shell around Evaluation.

import { type Command, InvalidArgumentError } from "commander";
import { SKILL_MODES, type SkillMode } from "../agents/in-sandbox/skills.js";
import { UserInputError } from "../errors.js";
import type { Price } from "../gateway/usage.js";
import { Evaluation, type EvaluationEvent } from "../job/evaluation.js";
import { type EvaluationSettings, planToJson } from "../job/plan.js";
import { cancelJobsOfThisProcess } from "../job/slurm/executor.js";
import { removeContainersOfRun } from "../sandbox/container/index.js";
import type { SandboxChoice } from "../sandbox/select.js";
import { VERIFIER_ENVIRONMENT_MODES, type VerifierEnvironmentMode } from "../task/verifier-mode.js";
import { ExitCode } from "./errors.js";
import { costLine, stoppedLines, summaryLine } from "./format.js";
import { withHelp } from "./help.js";
import { RUN_HELP } from "./help-pages.js";
import {
  atLeast,
  collect,
  oneOf,
  parseInteger,
  parseKeyValue,
  parseNumber,
  parseOnOff,
  parsePrice,
} from "./options.js";
import { createProgress } from "./progress.js";
import { resumeLines, whereLines } from "./run-end.js";

interface RunOptions {
  agent: string;
  verifierHardening?: "on" | "off";
  model?: string;
  trials: number;
  concurrency: number;
  parallelJobs?: number;
  maxConcurrentTrials?: number;
  jobsDir: string;
  jobName?: string;
  sandbox?: SandboxFlag;
  retryAttempts: number;
  include: string[];
  exclude: string[];
  agentEnv: Record<string, string>;
  dryRun?: boolean;
  quiet?: boolean;
  baseUrl?: string;
  apiKey?: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  reasoningEffort?: string;
  seed?: number;
  policyVersion?: string;
  captureTokens?: boolean;
  price?: Price;
  skillsDir?: string;
  skillMode?: SkillMode;
  timeoutMultiplier?: number;
  agentTimeoutMultiplier?: number;
  verifierTimeoutMultiplier?: number;
  environmentBuildTimeoutMultiplier?: number;
  verifierEnvironmentMode?: VerifierEnvironmentMode;
  endpointFirstByteTimeout?: number;
  endpointIdleTimeout?: number;
  endpointRetries?: number;
  failFastCalls?: number;
  maxEndpointConnections?: number;
  maxCallMib?: number;
  maxRecordedMib?: number;
  failFastRollouts?: number;
  maxCostUsd?: number;
  executor?: string;
  slurmPartition?: string;
  slurmAccount?: string;
  slurmSbatchArg: string[];
  gatewayHost?: string;
}

function skillMode(value: string): SkillMode {
  if (!(SKILL_MODES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected with-skill or no-skill, got ${JSON.stringify(value)}`);
  return value as SkillMode;
}

function verifierMode(value: string): VerifierEnvironmentMode {
  if (!(VERIFIER_ENVIRONMENT_MODES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected shared or separate, got ${JSON.stringify(value)}`);
  return value as VerifierEnvironmentMode;
}

/** Upstream's spellings of the container sandbox on one engine: the engine's own socket, unless DOCKER_HOST names one. */
const ENGINE_SANDBOXES = { docker: "unix:///var/run/docker.sock", podman: "unix:///run/podman/podman.sock" };
export const SANDBOXES = ["auto", "namespace", "container", "docker", "podman"] as const;
export type SandboxFlag = (typeof SANDBOXES)[number];

/**
 * --sandbox, else $BENCHFLOW_SANDBOX (named when it is wrong: the flag was never typed), else auto.
 * `docker` and `podman` (upstream's `--sandbox docker`) are the container sandbox on that engine:
 * the command points DOCKER_HOST at its socket, as a Docker client would be pointed, so the plan is
 * the one `--sandbox container` gives there.
 */
export function sandboxChoice(flag: SandboxFlag | undefined): SandboxChoice {
  const env = process.env.BENCHFLOW_SANDBOX;
  const chosen = flag ?? (env === undefined || env === "" ? "auto" : env);
  if (!(SANDBOXES as readonly string[]).includes(chosen))
    throw new UserInputError(
      `BENCHFLOW_SANDBOX=${JSON.stringify(env)} is not a sandbox: set it to auto, namespace or container (docker and podman: the container sandbox on that engine), or unset it (--sandbox overrides it)`,
    );
  if (chosen === "docker" || chosen === "podman") {
    if (!process.env.DOCKER_HOST) process.env.DOCKER_HOST = ENGINE_SANDBOXES[chosen];
    return "container";
  }
  return chosen as SandboxChoice;
}

export function registerRunCommand(program: Command): void {
  const run = program
    .command("run")
    .description("Run N rollouts of each task (each repeat a job of its own) and score them")
    .argument("<task-or-dir>", "a task folder, or a folder of tasks")
    .requiredOption(
      "-a, --agent <agent>",
      "agent: oracle, nop, bench-agent, claude-code, codex, opencode, claude-agent-acp, codex-acp, qwen-code, kilo, gemini-cli, pi, or acp:<npm package@version | command>",
    )
    .option(
      "-m, --model <provider/model>",
      "the policy: a hosted model (deepseek/deepseek-v4-flash, anthropic/..., openai/...) or one you serve (vllm/NAME with --base-url)",
    );
  // In the order the help lists them: the jobs, the policy and its endpoint, the task, where it runs.
  jobFlags(run);
  policyFlags(run);
  taskFlags(run);
  executorFlags(run)
    .option("--dry-run", "print the plan as JSON (tasks, sandbox, policy settings) and run nothing")
    .option(
      "--config <file>",
      "upstream's YAML run file: the run's flags as keys (jobs_dir: jobs, agent_env: {K: V}, tasks_dir: ...); flags typed here win",
    )
    .option("-q, --quiet", "no progress output")
    .action(async (taskOrDir: string, opts: RunOptions) => {
      const code = await runCommand(taskOrDir, opts);
      if (code !== 0) throw new ExitCode(code);
    });
  withHelp(run, RUN_HELP);
}

/** How many rollouts, how many at once, where they are written, which tasks. */
function jobFlags(run: Command): Command {
  return run
    .option("--trials <n>", "rollouts per task; each is a job of its own", atLeast(1), 1)
    .option("-j, --concurrency <n>", "trials at once within a job", atLeast(1), 4)
    .option("--parallel-jobs <k>", "repeat jobs at once; each keeps its own folder and -j", atLeast(1))
    .option("--max-concurrent-trials <n>", "trials at once across the run's jobs", atLeast(1))
    .option("--jobs-dir <dir>", "where jobs are written", "jobs")
    .option("--job-name <name>", "name of the jobs; running again with the same name resumes them")
    .option(
      "--sandbox <kind>",
      "auto, namespace, container (docker, podman: the container sandbox on that engine)",
      oneOf(SANDBOXES),
    )
    .option("--retry-attempts <n>", "retries of an infrastructure failure", atLeast(0), 2)
    .option("--include <name-or-glob>", "only these tasks (repeatable)", collect, [])
    .option("--exclude <name-or-glob>", "not these tasks (repeatable)", collect, [])
    .option("--agent-env <KEY=VALUE>", "environment for the agent (repeatable)", parseKeyValue, {});
}

/** The policy's endpoint, the sampling the gateway enforces, and when a failing endpoint stops the run. */
function policyFlags(run: Command): Command {
  return run
    .option("--base-url <url>", "the policy's OpenAI-compatible endpoint, e.g. http://gpu:8000/v1")
    .option("--api-key <key>", "the policy's key (only the gateway sees it)")
    .option("--temperature <t>", "sampling temperature, enforced on every call", parseNumber)
    .option("--top-p <p>", "nucleus sampling, enforced on every call", parseNumber)
    .option("--max-tokens <n>", "completion limit, enforced on every call", parseInteger)
    .option(
      "--reasoning-effort <level>",
      "none, minimal, low, medium, high or xhigh: sent as reasoning_effort on every call, over the agent's",
    )
    .option(
      "--seed <n>",
      "a base seed: repeat k of a group sends seed n+k-1 on every call, so a rerun samples alike",
      parseInteger,
    )
    .option("--policy-version <v>", "the policy version to record on every call")
    .option("--capture-tokens", "record prompt and sampled token ids and logprobs on every call")
    .option(
      "--price <in,out[,cache_read[,cache_write]]>",
      "USD per million tokens, for cost (over the price table's)",
      parsePrice,
    )
    .option(
      "--endpoint-first-byte-timeout <sec>",
      "a model call fails when the endpoint sends no first byte for this long",
      parseNumber,
    )
    .option(
      "--endpoint-idle-timeout <sec>",
      "a model call fails when the endpoint goes silent mid-answer for this long",
      parseNumber,
    )
    .option("--endpoint-retries <n>", "the gateway's own retries of a 429 or 503", parseInteger)
    .option(
      "--fail-fast-calls <k>",
      "endpoint failures in a row that end a rollout as provider_error at once",
      parseInteger,
    )
    .option("--fail-fast-rollouts <m>", "provider_error rollouts in a row that stop the run", parseInteger)
    .option(
      "--max-cost-usd <usd>",
      "the run's budget: once finished rollouts have spent it, no more start (needs the model's price)",
      parseNumber,
    )
    .option(
      "--max-endpoint-connections <n>",
      "model calls in flight to the endpoint at once over the whole run (default 64 for a hosted provider, 1024 for a model you serve); more wait their turn",
      parseInteger,
    )
    .option("--max-call-mib <mib>", "one request body and one answer over this are refused", parseNumber)
    .option(
      "--max-recorded-mib <mib>",
      "a rollout's model calls are refused once its recorded trajectory would pass this",
      parseNumber,
    );
}

/** What the task gets beyond its own files: skills, time limits, how its verifier runs. */
function taskFlags(run: Command): Command {
  run
    .option(
      "--skills-dir <dir>",
      "agent CLIs: a folder of skill folders (each with a SKILL.md), added to the task's",
    )
    .option("--skill-mode <mode>", "agent CLIs: with-skill or no-skill, for an A/B run", skillMode);
  for (const [flag, description] of TIMEOUT_MULTIPLIERS) run.option(flag, description, parseNumber);
  return run
    .option(
      "--verifier-hardening <on|off>",
      "undo what the agent planted for the verifier before it runs (off only to debug a verifier)",
      parseOnOff("--verifier-hardening"),
    )
    .option(
      "--verifier-environment-mode <mode>",
      "shared or separate (a fresh sandbox that gets only the workspace and artifacts)",
      verifierMode,
    );
}

/** The task's time limits scaled: all of them, or one phase's. */
const TIMEOUT_MULTIPLIERS = [
  ["--timeout-multiplier <x>", "scale every task's time limits (agent, verifier, build)"],
  ["--agent-timeout-multiplier <x>", "scale the agent's time limit"],
  ["--verifier-timeout-multiplier <x>", "scale the verifier's time limit"],
  ["--environment-build-timeout-multiplier <x>", "scale the image build's limit"],
] as const;

/** Where the rollouts run: here, or each a SLURM job. */
function executorFlags(run: Command): Command {
  return run
    .option("--executor <kind>", "local or slurm: each trial a SLURM job")
    .option("--slurm-partition <name>", "SLURM partition")
    .option("--slurm-account <name>", "SLURM account")
    .option(
      "--slurm-sbatch-arg <arg>",
      "an sbatch option passed as is, e.g. --slurm-sbatch-arg=--qos=low (repeatable)",
      collect,
      [],
    )
    .option("--gateway-host <addr>", "where SLURM nodes reach the gateway");
}

async function runCommand(taskOrDir: string, opts: RunOptions): Promise<number> {
  const interrupt = new AbortController();
  const progress = createProgress(process.stderr, { quiet: opts.quiet === true, results: process.stdout });
  const evaluation = evaluationOf(taskOrDir, opts, interrupt.signal, progress.onEvent);
  if (opts.dryRun) {
    process.stdout.write(`${JSON.stringify(planToJson(await evaluation.plan()), null, 2)}\n`);
    return 0;
  }
  const signals = stopOnSignals(interrupt, {
    containers: (await evaluation.plan()).backend.kind === "container",
    slurm: evaluation.settings.executor?.kind === "slurm",
  });
  try {
    const result = await evaluation.run();
    // Each repeat's lines went out as it ended; what is left (a quiet run's, a job that never ended) now.
    progress.finish(result.results);
    process.stdout.write(`${summaryLine(result)}\n`);
    const cost = costLine(result.results);
    if (cost) process.stdout.write(`${cost}\n`);
    const plan = await evaluation.plan();
    for (const line of stoppedLines(result, plan.jobName)) process.stderr.write(`${line}\n`);
    const signalled = signals.signalled();
    const end = [
      ...(opts.quiet ? [] : whereLines(plan)),
      ...(signalled ? resumeLines(result, plan, process.argv.slice(2)) : []),
    ];
    for (const line of end) process.stderr.write(`${line}\n`);
    if (signalled) return signalled === "SIGINT" ? 130 : 143;
    return result.exitCode;
  } finally {
    signals.off();
  }
}

/** The flags as the library's settings; the environment's defaults are read here, in the command. */
function evaluationOf(
  taskOrDir: string,
  opts: RunOptions,
  signal: AbortSignal,
  onEvent: (e: EvaluationEvent) => void,
): Evaluation {
  return new Evaluation({
    tasks: taskOrDir,
    agent: opts.agent,
    model: opts.model ?? null,
    trials: opts.trials,
    concurrency: opts.concurrency,
    ...(opts.parallelJobs !== undefined ? { parallelJobs: opts.parallelJobs } : {}),
    ...(opts.maxConcurrentTrials !== undefined ? { maxConcurrentTrials: opts.maxConcurrentTrials } : {}),
    jobsDir: opts.jobsDir,
    jobName: opts.jobName ?? null,
    sandbox: sandboxChoice(opts.sandbox),
    retryAttempts: opts.retryAttempts,
    ...(opts.failFastRollouts !== undefined ? { failFastRollouts: opts.failFastRollouts } : {}),
    ...(opts.maxCostUsd !== undefined ? { maxCostUsd: opts.maxCostUsd } : {}),
    include: opts.include,
    exclude: opts.exclude,
    agentEnv: opts.agentEnv,
    skillsDir: opts.skillsDir ?? null,
    timeoutMultipliers: {
      all: opts.timeoutMultiplier ?? null,
      agent: opts.agentTimeoutMultiplier ?? null,
      verifier: opts.verifierTimeoutMultiplier ?? null,
      build: opts.environmentBuildTimeoutMultiplier ?? null,
    },
    ...(opts.skillMode ? { skillMode: opts.skillMode } : {}),
    ...(opts.verifierHardening ? { verifierHardening: opts.verifierHardening } : {}),
    ...(opts.verifierEnvironmentMode ? { verifierEnvironmentMode: opts.verifierEnvironmentMode } : {}),
    policy: policyOf(opts),
    ...executorOf(opts, process.env),
    env: process.env,
    signal,
    onEvent,
  });
}

function policyOf(opts: RunOptions): EvaluationSettings["policy"] {
  return {
    baseUrl: opts.baseUrl ?? null,
    apiKey: opts.apiKey ?? null,
    temperature: opts.temperature ?? null,
    topP: opts.topP ?? null,
    maxTokens: opts.maxTokens ?? null,
    reasoningEffort: opts.reasoningEffort ?? null,
    seed: opts.seed ?? null,
    policyVersion: opts.policyVersion ?? null,
    captureTokens: opts.captureTokens === true,
    price: opts.price ?? null,
    firstByteTimeoutSec: opts.endpointFirstByteTimeout ?? null,
    idleTimeoutSec: opts.endpointIdleTimeout ?? null,
    endpointRetries: opts.endpointRetries ?? null,
    failFastCalls: opts.failFastCalls ?? null,
    maxEndpointConnections: opts.maxEndpointConnections ?? null,
    maxCallMib: opts.maxCallMib ?? null,
    maxRecordedMib: opts.maxRecordedMib ?? null,
  };
}

/**
 * The first Ctrl-C (or SIGTERM) stops the run gently: rollouts in flight end as interrupted and are
 * recorded. A second one forces: nothing gets to clean up, so this run's containers and SLURM jobs
 * are removed here (briefly) before the process exits.
 */
function stopOnSignals(
  interrupt: AbortController,
  run: { containers: boolean; slurm: boolean },
): { signalled(): NodeJS.Signals | null; off(): void } {
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      // Forced: no rollout gets to clean up, so remove this run's containers ourselves (briefly).
      const code = sig === "SIGINT" ? 130 : 143;
      const cleanup = Promise.all([
        run.containers ? removeContainersOfRun().catch(() => []) : [],
        run.slurm ? cancelJobsOfThisProcess().catch(() => undefined) : undefined,
      ]);
      void Promise.race([cleanup, new Promise((r) => setTimeout(r, 5000))]).then(() => process.exit(code));
      return;
    }
    signalled = sig;
    process.stderr.write(`\nbench: ${sig}: stopping; trials in flight end as interrupted (again to force)\n`);
    interrupt.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signalled: () => signalled,
    off: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/** --executor and the SLURM flags, each over its BENCHFLOW_* variable. */
function executorOf(opts: RunOptions, env: NodeJS.ProcessEnv): Pick<EvaluationSettings, "executor"> {
  const kind = opts.executor ?? env.BENCHFLOW_EXECUTOR ?? "local";
  if (kind !== "local" && kind !== "slurm")
    throw new UserInputError(
      opts.executor === undefined
        ? `BENCHFLOW_EXECUTOR=${JSON.stringify(kind)} is not an executor: set it to local or slurm, or unset it (--executor overrides it)`
        : `--executor must be local or slurm; got ${JSON.stringify(kind)}`,
    );
  if (kind === "local") return {};
  const envArgs = (env.BENCHFLOW_SLURM_SBATCH_ARGS ?? "").split(/\s+/).filter(Boolean);
  return {
    executor: {
      kind: "slurm",
      partition: opts.slurmPartition ?? env.BENCHFLOW_SLURM_PARTITION ?? null,
      account: opts.slurmAccount ?? env.BENCHFLOW_SLURM_ACCOUNT ?? null,
      sbatchArgs: opts.slurmSbatchArg.length > 0 ? opts.slurmSbatchArg : envArgs,
      gatewayHost: opts.gatewayHost ?? env.BENCHFLOW_SLURM_GATEWAY_HOST ?? null,
    },
  };
}
