import path from "node:path";
import type { Agent, ModelAccess } from "../agents/types.js";
import type { ModelWitness, RolloutUsage } from "../gateway/index.js";
import type { PolicyEndpoint, Sandbox, SandboxBackend } from "../sandbox/types.js";
import type { VerifierVerdict } from "../schemas/attribution.js";
import { type GroupIdentity, NO_SAMPLING } from "../schemas/group-identity.js";
import type { RolloutExecutor } from "../schemas/result.js";
import type { Task } from "../task/types.js";

/**
 * What a rollout needs of its run's configuration, resolved once (job/plan.ts) and handed to every
 * rollout of the run by reference: nothing here is copied into a job's or a rollout's own fields.
 */
export interface RunConfig {
  /** The name every repeat job of the run shares (`--job-name`). */
  jobName: string;
  agent: Agent;
  model: string | null;
  backend: SandboxBackend;
  /** --agent-env, less the policy's endpoint and key (only the gateway holds those). */
  agentEnv: Record<string, string>;
  /** Verifier hardening (verifier/harden.ts): on unless the run turned it off. */
  verifierHardening: "on" | "off";
  /** What every rollout's config.json records of the run (no secrets). */
  record: Record<string, unknown>;
  /** The run's part of each rollout's group identity (the task adds its name and digest). */
  groupIdentity: RunGroupIdentity;
}

export type RunGroupIdentity = Omit<GroupIdentity, "task" | "task_digest">;

/** The group identity of a run whose agent calls no model (a control, a test's oracle run). */
export function modelFreeIdentity(run: string, agent: string): RunGroupIdentity {
  return { run, agent, model: null, policy_version: null, sampling: { ...NO_SAMPLING } };
}

/** The repeat job a rollout runs in. */
export interface JobRef {
  dir: string;
  /** `trial-01`: which repeat of the group this job is (recorded as `trial`). */
  repeat: string;
}

/** What the job adds to one rollout: its model session through the gateway. */
export interface RolloutHooks {
  /** Set when the agent calls a model: the gateway address and this rollout's own credential. */
  modelAccess?: ModelAccess | null;
  /** The gateway's port, for sandboxes that must reach it without any other network. */
  hostService?: { port: number; host?: string; originKey?: string } | null;
  /** The policy endpoint the gateway calls: the sandbox closes it to the agent (sandbox/host-block.ts). */
  policyEndpoint?: PolicyEndpoint | null;
  /** What the gateway saw of this rollout's model calls (decides provider_error and config_error). */
  modelWitness?(): ModelWitness;
  /** Aborted when the gateway ends the rollout (the endpoint kept failing, or refused the configuration). */
  modelEnded?: AbortSignal;
  /** A multi-step rollout's next step begins: the gateway tags the step's model calls with its name. */
  stepStarted?(step: string): void;
  /** Ends the rollout's session at the gateway and says what its model calls used (result.json's usage). */
  modelUsage?(): Promise<RolloutUsage>;
}

/**
 * Tells a verifier that fails on clean runs from one the policy broke: the task's own controls
 * (oracle, nop) run on clean sandboxes, once per task digest, sandbox kind and hardening (controls.ts).
 */
export interface ControlsJudge {
  /** The jobs folder whose .controls/ holds the verdicts (a SLURM node judges into the same). */
  readonly dir: string;
  verdict(task: Task, taskDigest: string, signal: AbortSignal): Promise<VerifierVerdict>;
}

/** One rollout to run; made by the job, consumed by runRollout. */
export interface RolloutPlan {
  run: RunConfig;
  job: JobRef;
  task: Task;
  taskDigest: string;
  rolloutName: string;
  /** 1 for the first attempt; a retry or a resume is the next. */
  attempt: number;
  /** The attempt this one replaces. */
  replaces: string | null;
  hooks?: RolloutHooks;
  /** Where the rollout runs when not here (result.json `executor`: --executor slurm's node and job). */
  executor?: RolloutExecutor;
  /**
   * The run's signal reaches the rollout's own processes too (SLURM signals every process of a job
   * at once): once it came, nothing a phase saw afterwards is the rollout's, which is interrupted.
   */
  signalReachesSandbox?: boolean;
  /** Where result.json is written; a SLURM node hands it to the host instead (job/slurm/node.ts). */
  resultFile?: string;
  /** Aborted when the run is interrupted (signal): the rollout ends as `interrupted`. */
  signal: AbortSignal;
  /** Hands work that need not delay the result (removing the sandbox) to the job, which awaits it. */
  deferCleanup?(work: Promise<void>): void;
  /** Called once per warning that the user should see (deduplicated by the job). */
  warn(message: string): void;
  /** Each phase as it begins (environment_setup, agent_execution, verifier, ...): the live view shows it. */
  onPhase?(phase: string): void;
  /** Asked when the verifier fails after the policy acted; absent (a control itself): the failure stays masked. */
  controls?: ControlsJudge;
}

/** The rollout's folder: beside its job's other rollouts. */
export function rolloutDirOf(plan: Pick<RolloutPlan, "job" | "rolloutName">): string {
  return path.join(plan.job.dir, plan.rolloutName);
}

/**
 * A started sandbox's warnings, said through the run (which says each message once): those about
 * the host or engine as they are, so every task's sandbox gives the same line; the rest name the task.
 */
export function sayWarnings(plan: Pick<RolloutPlan, "task" | "warn">, sandbox: Sandbox): void {
  const host = new Set(sandbox.hostWarnings ?? []);
  for (const w of sandbox.warnings ?? []) plan.warn(host.has(w) ? w : `task ${plan.task.name}: ${w}`);
}
