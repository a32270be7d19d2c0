import type { Agent, ModelAccess } from "../agents/types.js";
import type { ModelWitness } from "../gateway/index.js";
import type { PolicyEndpoint, SandboxBackend } from "../sandbox/types.js";
import type { RolloutResult } from "../schemas/result.js";
import type { Task } from "../task/types.js";

/** What the job adds to one rollout: its model session through the gateway, and the last word on its result. */
export interface RolloutHooks {
  /** Set when the agent calls a model: the gateway address and this trial's own credential. */
  modelAccess?: ModelAccess | null;
  /** The gateway's port, for sandboxes that must reach it without any other network. */
  hostService?: { port: number; host?: string } | null;
  /** The policy endpoint the gateway calls: the sandbox closes it to the agent (sandbox/host-block.ts). */
  policyEndpoint?: PolicyEndpoint | null;
  /** What the gateway saw of this rollout's model calls (decides provider_error and config_error). */
  modelWitness?(): ModelWitness;
  /** Aborted when the gateway ends the rollout (the endpoint kept failing, or refused the configuration). */
  modelEnded?: AbortSignal;
  /** A multi-step rollout's next step begins: the gateway tags the step's model calls with its name. */
  stepStarted?(step: string): void;
  /** Last word on the result before result.json is written (e.g. model usage from the gateway). */
  finalize?(result: RolloutResult): Promise<RolloutResult>;
}

/** Everything one rollout needs; made by the job, consumed by runTrial. */
export interface RolloutPlan {
  task: Task;
  taskDigest: string;
  jobDir: string;
  jobName: string;
  /** "trial-01": which repeat of the group this job is (recorded as `trial`). */
  repeatLabel: string;
  rolloutName: string;
  attempt: number;
  replaces: string | null;
  agent: Agent;
  model: string | null;
  backend: SandboxBackend;
  /** Settings recorded in config.json (no secrets). */
  settings: Record<string, unknown>;
  agentEnv: Record<string, string>;
  /** --verifier-hardening: absent, the job's settings say (default on). */
  verifierHardening?: "on" | "off";
  /** What the job adds to this rollout, e.g. its model access through the gateway (see TrialHooks). */
  hooks?: RolloutHooks;
  /** Aborted when the run is interrupted (signal): the trial ends as `interrupted`. */
  signal: AbortSignal;
  /** Hands work that need not delay the result (removing the sandbox) to the job, which awaits it. */
  deferCleanup?(work: Promise<void>): void;
  /** Called once per warning that the user should see (deduplicated by the job). */
  warn(message: string): void;
}
