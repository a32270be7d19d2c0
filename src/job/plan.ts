// Everything is checked before anything is written: bad input is exit 2 with one clear line, and
// no rollout already on disk is touched.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SkillMode } from "../agents/in-sandbox/skills.js";
import { resolveAgent } from "../agents/registry.js";
import { unofferedTaskTools } from "../agents/task-tools.js";
import type { Agent } from "../agents/types.js";
import { UserInputError } from "../errors.js";
import { PLAN } from "../jobs-dir/layout.js";
import { checkOptionKeys, opt } from "../options.js";
import { NETWORK_FIX, networkUnavailableReason } from "../sandbox/namespace/netns.js";
import { type SandboxChoice, selectBackend } from "../sandbox/select.js";
import type { SandboxBackend } from "../sandbox/types.js";
import { EvaluationPlan } from "../schemas/result.js";
import { taskDigest } from "../task/digest.js";
import { discoverTasks } from "../task/discover.js";
import { composeFileOf } from "../task/intent.js";
import { loadTasks } from "../task/load.js";
import { anyPhaseHasNetwork } from "../task/network.js";
import type { VerifierEnvironmentMode } from "../task/verifier-mode.js";
import { exists, readJsonIfExists } from "../util/fs.js";
import type { EvaluationEvent } from "./evaluation.js";
import { jobNameFor, repeatLabel, validJobName } from "./names.js";
import { POLICY_SETTINGS, type PolicySettings, type ResolvedPolicy, resolvePolicy } from "./policy.js";
import type { JobSpec, JobTask } from "./run-job.js";
import type { SlurmSettings } from "./slurm/executor.js";
import { MULTIPLIERS, resolveMultipliers, scaleTimeouts, type TimeoutMultipliers } from "./timeouts.js";
import { applyVerifierMode, rootAgentWarning } from "./verifier-mode.js";
import { ensureWritableDir } from "./writable-dir.js";

export interface EvaluationSettings {
  /** A task folder, or a folder of tasks. */
  tasks: string;
  agent: string;
  model?: string | null;
  /** How many rollouts per task; each repeat is a job of its own. Default 1. */
  trials?: number;
  /** How many trials run at once within a job (-j). Default 4. */
  concurrency?: number;
  /** How many of the repeat jobs run at once (--parallel-jobs). Default 1: one after another. */
  parallelJobs?: number;
  /** Trials at once across every job of the run (--max-concurrent-trials). Default max(-j, 4 x cores). */
  maxConcurrentTrials?: number;
  jobsDir?: string;
  /** Resume (or create) jobs of this name; default: a new name from the start time. */
  jobName?: string | null;
  sandbox?: SandboxChoice;
  /** Retries of an infrastructure failure. Default 2. */
  retryAttempts?: number;
  /** provider_error rollouts in a row that stop the run (default max(3, concurrency)). */
  failFastRollouts?: number;
  include?: string[];
  exclude?: string[];
  agentEnv?: Record<string, string>;
  signal?: AbortSignal;
  onEvent?: (event: EvaluationEvent) => void;
  prepareRollout?: JobSpec["prepareRollout"];
  retryBackoffMs?: number;
  /** Where and how the policy is served (agents that call a model). */
  policy?: PolicySettings;
  /** Where BENCHFLOW_* variables are read from, after --agent-env. Default: process.env. */
  env?: Record<string, string | undefined>;
  /** Extra settings recorded in every rollout's config.json. */
  recordSettings?: Record<string, unknown>;
  /** Agent CLIs: skills on (default) or off, for an A/B run. */
  skillMode?: SkillMode;
  /** Agent CLIs: a folder of skill folders (each with a SKILL.md), added to the task's own. */
  skillsDir?: string | null;
  /** Harbor's timeout multipliers: the task's limits scaled for this run. */
  timeoutMultipliers?: TimeoutMultipliers;
  /** Verifier hardening (verifier/harden.ts): "on" (default) or "off", recorded as verifier_hardening. */
  verifierHardening?: "on" | "off";
  /** `--verifier-environment-mode`: where every task's verifier runs, over its [verifier] environment_mode. */
  verifierEnvironmentMode?: VerifierEnvironmentMode | null;
  /** Where trials run: here (default) or each as a SLURM job (job/slurm/executor.ts). */
  executor?: { kind: "local" } | ({ kind: "slurm" } & SlurmSettings);
}

export interface PlannedJob {
  repeat: string;
  jobDir: string;
  /** True when this job folder already exists and will be completed rather than started. */
  resume: boolean;
  plan: EvaluationPlan;
}

export interface PlannedEvaluation {
  jobName: string;
  jobsDir: string;
  agent: Agent;
  model: string | null;
  backend: SandboxBackend;
  sandboxReason: string;
  concurrency: number;
  /** Repeat jobs at once; their trials share one bound, maxConcurrentTrials. */
  parallelJobs: number;
  maxConcurrentTrials: number;
  retryAttempts: number;
  tasks: JobTask[];
  jobs: PlannedJob[];
  warnings: string[];
  trialSettings: Record<string, unknown>;
  /** The policy behind the gateway, for agents that call a model. */
  policy: ResolvedPolicy | null;
  /** --agent-env without the policy's endpoint and key, which only the gateway may hold. */
  agentEnv: Record<string, string>;
  /** Where the trials run, as the settings gave it (--dry-run shows it). */
  executor: NonNullable<EvaluationSettings["executor"]>;
}

const GATEWAY_ONLY = ["BENCHFLOW_PROVIDER_BASE_URL", "BENCHFLOW_PROVIDER_API_KEY"];

/** Every option of an Evaluation: one not listed here is refused with the nearest name. */
const SETTINGS: Record<keyof EvaluationSettings, true> = {
  tasks: true,
  agent: true,
  model: true,
  trials: true,
  concurrency: true,
  parallelJobs: true,
  maxConcurrentTrials: true,
  jobsDir: true,
  jobName: true,
  sandbox: true,
  retryAttempts: true,
  failFastRollouts: true,
  include: true,
  exclude: true,
  agentEnv: true,
  signal: true,
  onEvent: true,
  prepareRollout: true,
  retryBackoffMs: true,
  policy: true,
  env: true,
  recordSettings: true,
  skillMode: true,
  skillsDir: true,
  timeoutMultipliers: true,
  verifierHardening: true,
  verifierEnvironmentMode: true,
  executor: true,
};

function verifierHardening(value: unknown): "on" | "off" {
  if (value === undefined || value === "on" || value === "off") return value ?? "on";
  throw new UserInputError(`verifierHardening must be "on" or "off"; got ${JSON.stringify(value)}`);
}

/**
 * The run's bound on trials at once when --parallel-jobs multiplies -j: four per core, since a trial
 * mostly waits on its model or its verifier; never below -j, so one job at a time runs as before.
 */
export function defaultMaxConcurrentTrials(concurrency: number): number {
  return Math.max(concurrency, 4 * os.availableParallelism());
}

function positiveInt(value: number | undefined, fallback: number, flag: string, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min)
    throw new UserInputError(`${flag} must be an integer >= ${min}; got ${value}`);
  return v;
}

export async function planEvaluation(s: EvaluationSettings): Promise<PlannedEvaluation> {
  checkOptionKeys("Evaluation", s, SETTINGS);
  checkOptionKeys("Evaluation policy", s.policy, POLICY_SETTINGS);
  checkOptionKeys("Evaluation timeoutMultipliers", s.timeoutMultipliers, MULTIPLIERS);
  const trials = positiveInt(s.trials, 1, opt("trials"));
  const concurrency = positiveInt(s.concurrency, 4, opt("concurrency"));
  const parallelJobs = Math.min(positiveInt(s.parallelJobs, 1, opt("parallelJobs")), trials);
  const maxConcurrentTrials = positiveInt(
    s.maxConcurrentTrials,
    defaultMaxConcurrentTrials(concurrency),
    opt("maxConcurrentTrials"),
  );
  const retryAttempts = positiveInt(s.retryAttempts, 2, opt("retryAttempts"), 0);
  if (s.skillsDir && !(await fs.stat(s.skillsDir).catch(() => null))?.isDirectory()) {
    throw new UserInputError(
      `${opt("skillsDir")} ${s.skillsDir}: not a folder; pass a folder of skill folders (each with a SKILL.md)`,
    );
  }
  const skillsDir = s.skillsDir ? path.resolve(s.skillsDir) : null;
  const agent = resolveAgent(s.agent, { skillMode: s.skillMode, skillsDir });
  if (agent.usesModel && !s.model) {
    throw new UserInputError(
      `agent ${agent.name} calls a model: pass ${opt("model", "provider/model")} (e.g. ${opt("model", "vllm/my-policy")})`,
    );
  }
  const model = agent.usesModel ? (s.model ?? null) : null;
  const unusedModel = modelNotUsed(agent, s);
  const agentEnvAll = s.agentEnv ?? {};
  const policy = model
    ? resolvePolicy(model, s.policy ?? {}, { ...(s.env ?? process.env), ...agentEnvAll })
    : null;
  const agentEnv = Object.fromEntries(Object.entries(agentEnvAll).filter(([k]) => !GATEWAY_ONLY.includes(k)));
  if (s.jobName != null && !validJobName(s.jobName)) {
    throw new UserInputError(
      `${opt("jobName")} ${JSON.stringify(s.jobName)} must be one folder name: letters, digits, . _ -`,
    );
  }
  const tasksPath = path.resolve(s.tasks);
  const dirs = await discoverTasks(tasksPath, { include: s.include, exclude: s.exclude });
  // Every broken task is refused together, before anything runs or is written.
  const multipliers = resolveMultipliers(s.timeoutMultipliers);
  const loaded = (await loadTasks(dirs))
    .map((t) => (multipliers ? scaleTimeouts(t, multipliers) : t))
    .map((t) => applyVerifierMode(t, s.verifierEnvironmentMode));
  const tasks = await Promise.all(loaded.map(async (task) => ({ task, digest: await taskDigest(task.dir) })));
  const warnings = tasks.flatMap(({ task }) => task.warnings.map((w) => `task ${task.name}: ${w}`));
  warnings.push(...tasks.flatMap(({ task }) => unofferedTaskTools(agent, task)));
  const { backend, reason } = await selectBackend(s.sandbox ?? "auto");
  if (unusedModel) warnings.push(unusedModel);
  const rootWarning = rootAgentWarning(loaded, backend.kind);
  if (rootWarning) warnings.push(rootWarning);
  if (backend.kind === "namespace") {
    await refuseComposeTasks(tasks, reason);
    warnings.push(...runStepWarnings(tasks));
    await refuseNetworkWithout(tasks);
  }
  const jobsDir = path.resolve(s.jobsDir ?? "jobs");
  const agentDir = path.join(jobsDir, agent.name);
  const jobName = s.jobName ?? (await freshJobName(agentDir, trials));
  const jobs: PlannedJob[] = [];
  for (let i = 1; i <= trials; i++) {
    const label = repeatLabel(i, trials);
    const jobDir = path.join(agentDir, label, jobName);
    const plan: EvaluationPlan = {
      schema_version: 1,
      job_name: jobName,
      trial: label,
      trial_index: i,
      trials_total: trials,
      tasks_dir: tasksPath,
      tasks: tasks.map(({ task, digest }) => ({ name: task.name, path: task.dir, digest })),
      agent: agent.name,
      model,
      sandbox: backend.kind,
      concurrency,
      retry_attempts: retryAttempts,
      agent_env_keys: Object.keys(s.agentEnv ?? {}).sort(),
      created_at: new Date().toISOString(),
    };
    const resume = await checkResumable(jobDir, plan, warnings);
    jobs.push({ repeat: label, jobDir, resume, plan });
  }
  const trialSettings = {
    sandbox: backend.kind,
    concurrency,
    trials,
    ...(parallelJobs > 1 ? { parallel_jobs: parallelJobs, max_concurrent_trials: maxConcurrentTrials } : {}),
    policy: policy?.record ?? null,
    ...(multipliers ? { timeout_multipliers: multipliers } : {}),
    ...(s.skillMode || skillsDir ? { skill_mode: s.skillMode ?? "with-skill", skills_dir: skillsDir } : {}),
    verifier_hardening: verifierHardening(s.verifierHardening),
    ...(s.executor?.kind === "slurm" ? { executor: "slurm" } : {}),
    ...s.recordSettings,
  };
  return {
    jobName,
    jobsDir,
    agent,
    model,
    backend,
    sandboxReason: reason,
    concurrency,
    parallelJobs,
    maxConcurrentTrials,
    retryAttempts,
    tasks,
    jobs,
    warnings,
    trialSettings,
    policy,
    agentEnv,
    executor: s.executor ?? { kind: "local" },
  };
}

/** Make sure the jobs directory can be written; called by run, not by --dry-run. */
export async function prepareJobsDir(plan: PlannedEvaluation): Promise<void> {
  await ensureWritableDir(plan.jobsDir);
  for (const job of plan.jobs) await ensureWritableDir(job.jobDir);
}

/** Sidecars need containers: a compose task cannot run in the namespace sandbox, so say so before anything runs. */
async function refuseComposeTasks(tasks: JobTask[], reason: string): Promise<void> {
  const found: string[] = [];
  for (const { task } of tasks) {
    const file = await composeFileOf(task.environmentDir);
    if (file) found.push(`${task.name} (${path.basename(file)})`);
  }
  if (found.length === 0) return;
  throw new UserInputError(
    `${found.length} task(s) have several containers, which only ${opt("sandbox", "container")} runs: ${found.join(", ")}. The run picked the namespace sandbox (${reason}); start Docker or Podman (scripts/setup-podman.sh) and use ${opt("sandbox", "container")}, or leave these tasks out with ${opt("exclude")}`,
  );
}

function runStepWarnings(tasks: JobTask[]): string[] {
  return tasks
    .filter(({ task }) => (task.dockerfile?.runSteps.length ?? 0) > 0)
    .map(
      ({ task }) =>
        `task ${task.name}: its Dockerfile has ${task.dockerfile?.runSteps.length} RUN step(s), which the namespace sandbox cannot apply without an image; the task runs on this machine's own programs. Use --sandbox container to build its image.`,
    );
}

/** Tasks with network need slirp4netns in the namespace sandbox: refused before anything runs. */
async function refuseNetworkWithout(tasks: JobTask[]): Promise<void> {
  const needing = tasks.filter(({ task }) => anyPhaseHasNetwork(task)).map(({ task }) => task.name);
  if (needing.length === 0) return;
  const why = await networkUnavailableReason();
  if (why === null) return;
  throw new UserInputError(
    `${needing.length} task(s) have network (${needing.slice(0, 5).join(", ")}${needing.length > 5 ? ", ..." : ""}), which the namespace sandbox gives through a network namespace of its own, but ${why}: ${NETWORK_FIX}`,
  );
}

async function freshJobName(agentDir: string, trials: number): Promise<string> {
  const base = jobNameFor(new Date());
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}-${n}`;
    const taken = await Promise.all(
      Array.from({ length: trials }, (_, i) => exists(path.join(agentDir, repeatLabel(i + 1, trials), name))),
    );
    if (!taken.some(Boolean)) return name;
  }
}

async function checkResumable(jobDir: string, plan: EvaluationPlan, warnings: string[]): Promise<boolean> {
  const file = path.join(jobDir, PLAN);
  let raw: unknown;
  try {
    raw = await readJsonIfExists(file);
  } catch {
    throw new UserInputError(
      `${file} is not valid JSON: move the job folder away or use another ${opt("jobName")}`,
    );
  }
  if (raw === undefined) return (await exists(jobDir)) && (await fs.readdir(jobDir)).length > 0;
  const old = EvaluationPlan.safeParse(raw);
  if (!old.success)
    throw new UserInputError(`${file} is not a BenchFlow plan: use another ${opt("jobName")}`);
  const was = old.data;
  const mismatch =
    was.agent !== plan.agent
      ? `agent ${was.agent}`
      : was.model !== plan.model
        ? `model ${was.model}`
        : was.tasks.map((t) => t.name).join(",") !== plan.tasks.map((t) => t.name).join(",")
          ? `tasks ${was.tasks.map((t) => t.name).join(", ")}`
          : null;
  if (mismatch) {
    throw new UserInputError(
      `job ${plan.job_name} (${plan.trial}) was planned for ${mismatch}; this run differs. Use another ${opt("jobName")} to start a new job.`,
    );
  }
  for (const t of plan.tasks) {
    const before = was.tasks.find((w) => w.name === t.name);
    if (before && before.digest !== t.digest) {
      warnings.push(
        `task ${t.name} changed since job ${plan.job_name} was planned; its finished rollouts keep the old version`,
      );
    }
  }
  plan.created_at = was.created_at;
  return true;
}

/**
 * A control agent (oracle, nop) given a model: a warning, not an error, so a control run can keep
 * the policy run's command line with only the agent changed; the model is neither used nor recorded.
 */
function modelNotUsed(agent: Agent, s: EvaluationSettings): string | null {
  if (agent.usesModel) return null;
  const p = s.policy ?? {};
  const given = [
    s.model ? `model ${s.model} (-m)` : null,
    p.baseUrl ? "baseUrl (--base-url)" : null,
    p.temperature != null || p.topP != null || p.maxTokens != null || p.seed != null ? "sampling" : null,
    p.captureTokens ? "captureTokens (--capture-tokens)" : null,
  ].filter((g): g is string => g !== null);
  if (given.length === 0) return null;
  return `agent ${agent.name} calls no model: ${given.join(", ")} not used, nor recorded in config.json; pick a model-using agent (bench-agent, claude-code, codex, opencode) to use them`;
}

/** What --dry-run prints: the plan of every job, as JSON. */
export function planToJson(plan: PlannedEvaluation): Record<string, unknown> {
  return {
    job_name: plan.jobName,
    jobs_dir: plan.jobsDir,
    agent: plan.agent.name,
    model: plan.model,
    sandbox: plan.backend.kind,
    sandbox_reason: plan.sandboxReason,
    concurrency: plan.concurrency,
    parallel_jobs: plan.parallelJobs,
    max_concurrent_trials: plan.maxConcurrentTrials,
    retry_attempts: plan.retryAttempts,
    // The endpoint, sampling, capture and limits every model call gets (config.json's policy; no key).
    policy: plan.policy?.record ?? null,
    // Where the trials go: here, or each a SLURM job with these sbatch settings (flags over BENCHFLOW_SLURM_*).
    executor:
      plan.executor.kind === "slurm"
        ? {
            kind: "slurm",
            partition: plan.executor.partition ?? null,
            account: plan.executor.account ?? null,
            sbatch_args: plan.executor.sbatchArgs ?? [],
            gateway_host: plan.executor.gatewayHost ?? null,
          }
        : { kind: "local" },
    warnings: plan.warnings,
    jobs: plan.jobs.map((j) => ({ trial: j.repeat, job_dir: j.jobDir, resume: j.resume, plan: j.plan })),
  };
}
