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
import { checkOptionKeys, opt, phrase } from "../options.js";
import type { JobRef } from "../rollout/types.js";
import { networkFix, networkUnavailableReason } from "../sandbox/namespace/netns.js";
import { type SandboxChoice, selectBackend } from "../sandbox/select.js";
import type { SandboxBackend } from "../sandbox/types.js";
import { type GroupSampling, identityDifferences, NO_SAMPLING } from "../schemas/group-identity.js";
import { EvaluationPlan, type RolloutResult } from "../schemas/result.js";
import { taskDigest } from "../task/digest.js";
import { discoverTasks } from "../task/discover.js";
import { composeFileOf } from "../task/intent.js";
import { loadTasks } from "../task/load.js";
import { anyPhaseHasNetwork } from "../task/network.js";
import type { VerifierEnvironmentMode } from "../task/verifier-mode.js";
import { exists, fileSafeName, readJsonIfExists } from "../util/fs.js";
import type { Stopped } from "./breaker.js";
import { jobNameFor, repeatLabel, validJobName } from "./names.js";
import { POLICY_SETTINGS, type PolicySettings, type ResolvedPolicy, resolvePolicy } from "./policy.js";
import { PROVIDER_ENV } from "./providers.js";
import type { JobOutcome, JobRun, JobSpec, JobTask } from "./run-job.js";
import type { SlurmSettings } from "./slurm/executor.js";
import { MULTIPLIERS, resolveMultipliers, scaleTimeouts, type TimeoutMultipliers } from "./timeouts.js";
import { applyVerifierMode, rootAgentWarning } from "./verifier-mode.js";
import { ensureWritableDir } from "./writable-dir.js";

/** What a run says as it goes (EvaluationSettings.onEvent; the command prints them). */
export type EvaluationEvent =
  | { type: "plan"; plan: PlannedEvaluation }
  | { type: "warning"; message: string }
  | { type: "job-start"; repeat: string; jobDir: string; tasks: number }
  | { type: "rollout-start"; repeat: string; task: string; rolloutName: string }
  | { type: "rollout-phase"; repeat: string; task: string; rolloutName: string; phase: string }
  | { type: "rollout-end"; repeat: string; result: RolloutResult }
  | { type: "job-end"; outcome: JobOutcome }
  | { type: "stopped"; stopped: Stopped; notStarted: number; jobName: string };

export interface EvaluationSettings {
  /** A task folder, or a folder of tasks. */
  tasks: string;
  agent: string;
  model?: string | null;
  /** How many rollouts per task; each repeat is a job of its own. Default 1. */
  trials?: number;
  /** How many rollouts run at once within a job (-j). Default 4. */
  concurrency?: number;
  /** How many of the repeat jobs run at once (--parallel-jobs). Default 1: one after another. */
  parallelJobs?: number;
  /** Rollouts at once across every job of the run (the flag's name). Default max(concurrency, 4 x cores). */
  maxConcurrentTrials?: number;
  jobsDir?: string;
  /** Resume (or create) jobs of this name; default: a new name from the start time. */
  jobName?: string | null;
  sandbox?: SandboxChoice;
  /** A sandbox backend of the caller's own (library only), used instead of `sandbox`'s choice. */
  backend?: SandboxBackend;
  /** Retries of an infrastructure failure. Default 2. */
  retryAttempts?: number;
  /** provider_error rollouts in a row that stop the run (default max(3, concurrency)). */
  failFastRollouts?: number;
  /** USD the run may spend (upstream's max cost): once finished rollouts reach it, no more start. */
  maxCostUsd?: number | null;
  include?: string[];
  exclude?: string[];
  agentEnv?: Record<string, string>;
  signal?: AbortSignal;
  onEvent?: (event: EvaluationEvent) => void;
  prepareRollout?: JobSpec["prepareRollout"];
  retryBackoffMs?: number;
  /** Where and how the policy is served (agents that call a model). */
  policy?: PolicySettings;
  /** Where upstream's BENCHFLOW_* variables are read from, after agentEnv (the command passes its environment). Default: none. */
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
  /** Where rollouts run: here (default) or each as a SLURM job (job/slurm/executor.ts). */
  executor?: { kind: "local" } | ({ kind: "slurm" } & SlurmSettings);
}

/** One repeat job of the run: where it goes, and its plan (evaluation.json). */
export interface PlannedJob extends JobRef {
  /** True when this job folder already exists and will be completed rather than started. */
  resume: boolean;
  plan: EvaluationPlan;
}

/**
 * The run's one resolved configuration: made once from the settings (or the command's flags) and
 * handed down as it is. Each job gets it with its PlannedJob (run-job.ts JobSpec); each rollout with
 * the same two (rollout/types.ts RolloutPlan).
 */
export interface PlannedEvaluation extends JobRun {
  jobsDir: string;
  sandboxReason: string;
  /** Repeat jobs at once; their rollouts share one bound, maxConcurrentTrials. */
  parallelJobs: number;
  maxConcurrentTrials: number;
  /** provider_error rollouts in a row that stop the run (the breaker's limit). */
  failFastRollouts: number;
  /** The run's budget in USD, null: none. */
  maxCostUsd: number | null;
  jobs: PlannedJob[];
  warnings: string[];
  /** What the run would do better another way (the --parallel-jobs hint): said once, not a warning. */
  notes: string[];
  /** The policy behind the gateway, for agents that call a model. */
  policy: ResolvedPolicy | null;
  /** Where the rollouts run, as the settings gave it (--dry-run shows it). */
  executor: NonNullable<EvaluationSettings["executor"]>;
}

// A provider's key and URL given through agentEnv are the gateway's: never an agent's environment.
const GATEWAY_ONLY = ["BENCHFLOW_PROVIDER_BASE_URL", "BENCHFLOW_PROVIDER_API_KEY", ...PROVIDER_ENV];

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
  backend: true,
  retryAttempts: true,
  failFastRollouts: true,
  maxCostUsd: true,
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
 * The run's bound on rollouts at once when parallel jobs multiply -j: four per core, since a rollout
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

/** The numbers of the run, checked: repeats, rollouts at once, retries. */
function countsOf(s: EvaluationSettings) {
  const trials = positiveInt(s.trials, 1, opt("trials"));
  const concurrency = positiveInt(s.concurrency, 4, opt("concurrency"));
  const parallelJobs = Math.min(positiveInt(s.parallelJobs, 1, opt("parallelJobs")), trials);
  const maxConcurrentTrials = positiveInt(
    s.maxConcurrentTrials,
    defaultMaxConcurrentTrials(concurrency),
    opt("maxConcurrentTrials"),
  );
  const retryAttempts = positiveInt(s.retryAttempts, 2, opt("retryAttempts"), 0);
  return { trials, concurrency, parallelJobs, maxConcurrentTrials, retryAttempts };
}

/** The agent, the model it calls, and the policy behind the gateway; the key stays with the gateway. */
async function agentAndPolicy(s: EvaluationSettings) {
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
  const agentEnvAll = s.agentEnv ?? {};
  // upstream's BENCHFLOW_* variables: from agentEnv, else from the environment the caller passes.
  const policy = model ? resolvePolicy(model, s.policy ?? {}, { ...s.env, ...agentEnvAll }) : null;
  const agentEnv = Object.fromEntries(Object.entries(agentEnvAll).filter(([k]) => !GATEWAY_ONLY.includes(k)));
  return { agent, model, policy, agentEnv, skillsDir, unusedModel: modelNotUsed(agent, s) };
}

/** Every task, loaded with the run's multipliers and verifier mode, and its digest; broken ones refused together. */
async function tasksOf(s: EvaluationSettings) {
  const dirs = await discoverTasks(path.resolve(s.tasks), { include: s.include, exclude: s.exclude });
  const multipliers = resolveMultipliers(s.timeoutMultipliers);
  const loaded = (await loadTasks(dirs))
    .map((t) => (multipliers ? scaleTimeouts(t, multipliers) : t))
    .map((t) => applyVerifierMode(t, s.verifierEnvironmentMode));
  const tasks = await Promise.all(loaded.map(async (task) => ({ task, digest: await taskDigest(task.dir) })));
  return { tasks, multipliers };
}

/** What the sandbox picked refuses or warns of these tasks, before anything runs. */
async function checkSandbox(
  backend: SandboxBackend,
  reason: string,
  tasks: JobTask[],
  warnings: string[],
): Promise<void> {
  const rootWarning = rootAgentWarning(
    tasks.map((t) => t.task),
    backend.kind,
  );
  if (rootWarning) warnings.push(rootWarning);
  if (backend.kind === "namespace") {
    await refuseComposeTasks(tasks, reason);
    warnings.push(...runStepWarnings(tasks));
    await refuseNetworkWithout(tasks);
  }
}

/** One job per repeat, each with its plan; a job folder that exists is resumed (checked here). */
async function jobsOf(
  s: EvaluationSettings,
  run: {
    agent: Agent;
    model: string | null;
    backend: SandboxBackend;
    tasks: JobTask[];
    policyVersion: string | null;
    sampling: GroupSampling;
  },
  counts: ReturnType<typeof countsOf>,
  warnings: string[],
): Promise<{ jobsDir: string; jobName: string; jobs: PlannedJob[] }> {
  const jobsDir = path.resolve(s.jobsDir ?? "jobs");
  const agentDir = path.join(jobsDir, fileSafeName(run.agent.name));
  const jobName = s.jobName ?? (await freshJobName(agentDir, counts.trials));
  const jobs: PlannedJob[] = [];
  for (let i = 1; i <= counts.trials; i++) {
    const repeat = repeatLabel(i, counts.trials);
    const dir = path.join(agentDir, repeat, jobName);
    const plan: EvaluationPlan = {
      schema_version: 1,
      job_name: jobName,
      trial: repeat,
      trial_index: i,
      trials_total: counts.trials,
      tasks_dir: path.resolve(s.tasks),
      tasks: run.tasks.map(({ task, digest }) => ({ name: task.name, path: task.dir, digest })),
      agent: run.agent.name,
      model: run.model,
      sandbox: run.backend.kind,
      concurrency: counts.concurrency,
      retry_attempts: counts.retryAttempts,
      agent_env_keys: Object.keys(s.agentEnv ?? {}).sort(),
      created_at: new Date().toISOString(),
      policy_version: run.policyVersion,
      sampling: run.sampling,
    };
    const resume = await checkResumable(dir, plan, warnings);
    jobs.push({ repeat, dir, resume, plan });
  }
  return { jobsDir, jobName, jobs };
}

export async function planEvaluation(s: EvaluationSettings): Promise<PlannedEvaluation> {
  checkOptionKeys("Evaluation", s, SETTINGS);
  checkOptionKeys("Evaluation policy", s.policy, POLICY_SETTINGS);
  checkOptionKeys("Evaluation timeoutMultipliers", s.timeoutMultipliers, MULTIPLIERS);
  const counts = countsOf(s);
  const { agent, model, policy, agentEnv, skillsDir, unusedModel } = await agentAndPolicy(s);
  if (s.jobName != null && !validJobName(s.jobName)) {
    throw new UserInputError(
      `${opt("jobName")} ${JSON.stringify(s.jobName)} must be one folder name: letters, digits, . _ -`,
    );
  }
  const { tasks, multipliers } = await tasksOf(s);
  const warnings = [
    ...tasks.flatMap(({ task }) => task.warnings.map((w) => `task ${task.name}: ${w}`)),
    ...tasks.flatMap(({ task }) => unofferedTaskTools(agent, task)),
  ];
  const { backend, reason } = s.backend
    ? { backend: s.backend, reason: "the caller's own backend" }
    : await selectBackend(s.sandbox ?? "auto");
  if (unusedModel) warnings.push(unusedModel);
  await checkSandbox(backend, reason, tasks, warnings);
  const sampling = samplingOfPolicy(policy);
  const policyVersion = policy?.record.policy_version ?? null;
  const { jobsDir, jobName, jobs } = await jobsOf(
    s,
    { agent, model, backend, tasks, policyVersion, sampling },
    counts,
    warnings,
  );
  const hardening = verifierHardening(s.verifierHardening);
  // What every rollout's config.json records of the run (no secrets).
  const record = {
    sandbox: backend.kind,
    concurrency: counts.concurrency,
    trials: counts.trials,
    ...(counts.parallelJobs > 1
      ? { parallel_jobs: counts.parallelJobs, max_concurrent_trials: counts.maxConcurrentTrials }
      : {}),
    policy: policy?.record ?? null,
    ...(multipliers ? { timeout_multipliers: multipliers } : {}),
    ...(s.skillMode || skillsDir ? { skill_mode: s.skillMode ?? "with-skill", skills_dir: skillsDir } : {}),
    verifier_hardening: hardening,
    ...(s.executor?.kind === "slurm" ? { executor: "slurm" } : {}),
    ...s.recordSettings,
  };
  const { trials: _, ...bounds } = counts;
  return {
    jobName,
    jobsDir,
    agent,
    model,
    backend,
    sandboxReason: reason,
    ...bounds,
    failFastRollouts: failFastRollouts(s, rolloutsAtOnce(counts)),
    maxCostUsd: maxCostOf(s, policy),
    retryBackoffMs: s.retryBackoffMs ?? 500,
    tasks,
    jobs,
    warnings,
    notes: parallelJobsHint(tasks.length, counts),
    record,
    verifierHardening: hardening,
    policy,
    agentEnv,
    executor: s.executor ?? { kind: "local" },
    groupIdentity: { run: jobName, agent: agent.name, model, policy_version: policyVersion, sampling },
  };
}

/** The sampling part of the group identity: what the run set (a control agent's is none). */
function samplingOfPolicy(policy: ResolvedPolicy | null): GroupSampling {
  const s = policy?.record.sampling;
  if (!s) return { ...NO_SAMPLING };
  return {
    temperature: s.temperature,
    top_p: s.top_p,
    max_tokens: s.max_tokens,
    reasoning_effort: s.reasoning_effort ?? null,
    seed_base: s.seed ?? null,
  };
}

/**
 * The seed's repeats run one after another, each a job of its own, and -j runs a job's trials at
 * once: with one task, -j has nothing to run beside the one trial. Said once, with what does help.
 */
function parallelJobsHint(tasks: number, c: { trials: number; parallelJobs: number }): string[] {
  if (tasks !== 1 || c.trials < 2 || c.parallelJobs > 1) return [];
  return [
    `one task: its ${c.trials} repeats run one after another (each is a job of its own, and ${opt("concurrency")} runs the trials of one job at once); ${opt("parallelJobs", String(c.trials))} runs them at once`,
  ];
}

/** Rollouts that can run at once in the whole run: -j per job, jobs at once, under the run's bound. */
export function rolloutsAtOnce(c: {
  concurrency: number;
  parallelJobs: number;
  maxConcurrentTrials: number;
}) {
  return Math.min(c.concurrency * c.parallelJobs, c.maxConcurrentTrials);
}

/** A budget needs a cost: a model without a price (a model you serve, one the table lacks) cannot have one. */
function maxCostOf(s: EvaluationSettings, policy: { gateway: { price?: unknown } } | null): number | null {
  const v = s.maxCostUsd ?? null;
  if (v === null) return null;
  if (!(Number.isFinite(v) && v > 0))
    throw new UserInputError(`${opt("maxCostUsd")} must be a number of USD > 0; got ${v}`);
  if (!policy?.gateway.price)
    throw new UserInputError(
      `${opt("maxCostUsd")} needs the model's price: the price table has none for ${s.model ?? "this agent (it calls no model)"}; pass ${opt("policy.price", "IN,OUT")}`,
    );
  return v;
}

/**
 * The breaker's limit: failFastRollouts, else max(3, rollouts at once) (one wave of concurrent
 * rollouts and more).
 */
function failFastRollouts(s: EvaluationSettings, atOnce: number): number {
  const v = s.failFastRollouts ?? Math.max(3, atOnce);
  if (!Number.isInteger(v) || v < 1)
    throw new UserInputError(`${opt("failFastRollouts")} must be an integer >= 1; got ${s.failFastRollouts}`);
  return v;
}

/** Make sure the jobs directory can be written; called by run, not by --dry-run. */
export async function prepareJobsDir(plan: PlannedEvaluation): Promise<void> {
  await ensureWritableDir(plan.jobsDir);
  for (const job of plan.jobs) await ensureWritableDir(job.dir);
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
        `task ${task.name}: its Dockerfile has ${task.dockerfile?.runSteps.length} RUN step(s), which the namespace sandbox cannot apply without an image; the task runs on this machine's own programs. Use ${opt("sandbox", "container")} to build its image.`,
    );
}

/** Tasks with network need slirp4netns in the namespace sandbox: refused before anything runs. */
async function refuseNetworkWithout(tasks: JobTask[]): Promise<void> {
  const needing = tasks.filter(({ task }) => anyPhaseHasNetwork(task)).map(({ task }) => task.name);
  if (needing.length === 0) return;
  const why = await networkUnavailableReason();
  if (why === null) return;
  throw new UserInputError(
    `${needing.length} task(s) have network (${needing.slice(0, 5).join(", ")}${needing.length > 5 ? ", ..." : ""}), which the namespace sandbox gives through a network namespace of its own, but ${why}: ${networkFix()}`,
  );
}

async function freshJobName(agentDir: string, repeats: number): Promise<string> {
  const base = jobNameFor(new Date());
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}-${n}`;
    const taken = await Promise.all(
      Array.from({ length: repeats }, (_, i) =>
        exists(path.join(agentDir, repeatLabel(i + 1, repeats), name)),
      ),
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
  // A resume adds rollouts to the job's groups: a new policy version or new sampling would mix them.
  // Plans written before the identity was recorded do not say; the endpoint may always change.
  if (was.sampling !== undefined && was.policy_version !== undefined) {
    const differs = identityDifferences(
      { model: was.model, policy_version: was.policy_version, sampling: was.sampling },
      {
        model: plan.model,
        policy_version: plan.policy_version ?? null,
        sampling: plan.sampling ?? NO_SAMPLING,
      },
    );
    if (differs.length > 0)
      throw new UserInputError(
        `job ${plan.job_name} (${plan.trial}) was planned with another group identity: ${differs.join(", ")}. Its rollouts would join groups of a different policy or sampling; rerun with the job's settings, or give the new ones a new ${opt("jobName")}.`,
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
    s.model ? phrase("model given", `model ${JSON.stringify(s.model)}`, s.model) : null,
    p.baseUrl ? phrase("policy.baseUrl given", "policy.baseUrl") : null,
    p.temperature != null ||
    p.topP != null ||
    p.maxTokens != null ||
    p.seed != null ||
    p.reasoningEffort != null
      ? "sampling"
      : null,
    p.captureTokens ? phrase("policy.captureTokens given", "policy.captureTokens") : null,
  ].filter((g): g is string => g !== null);
  if (given.length === 0) return null;
  return `agent ${agent.name} calls no model: ${given.join(", ")} not used, nor recorded in config.json; pick a model-using agent (bench-agent, claude-code, codex, opencode, claude-agent-acp, codex-acp, qwen-code, kilo, gemini-cli, pi, acp:...) to use them`;
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
    // Where the rollouts go: here, or each a SLURM job with these sbatch settings (flags over BENCHFLOW_SLURM_*).
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
    notes: plan.notes,
    jobs: plan.jobs.map((j) => ({ trial: j.repeat, job_dir: j.dir, resume: j.resume, plan: j.plan })),
  };
}
