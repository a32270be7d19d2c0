// An agent is the policy's body inside a rollout. The rollout hands it a sandbox and a limit; the
// agent reports what it did. Throw a CategorizedError for failures that are not the policy's
// (agent_setup, provider_error); return `error` for failures that are (agent_error).
import type { ReadOnlyMount, Sandbox, SandboxKind } from "../sandbox/types.js";
import type { Task } from "../task/types.js";

/** One line of trajectory/acp_trajectory.jsonl (upstream's ACP event shapes). */
export type TrajectoryEvent =
  | { type: "user_message"; text: string; ts?: string }
  | { type: "agent_message"; text: string; ts?: string }
  | { type: "agent_thought"; text: string; ts?: string }
  | {
      type: "tool_call";
      tool_call_id: string;
      title: string;
      kind: string;
      status: "completed" | "failed" | "pending";
      raw_input: unknown;
      raw_output: unknown;
      /** A Claude Code subagent's call: the tool call that started the subagent (train attributes by it). */
      parent_tool_call_id?: string;
      ts?: string;
    }
  | { type: "oracle"; command: string; return_code: number | null; stdout: string; ts?: string };

/** How a model-using agent reaches the policy: the gateway's address and this rollout's own credential. */
export interface ModelAccess {
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** What an agent readied on the host before its sandbox exists (an installed bundle, a relay). */
export interface HostPreparation {
  /** Bound read-only into the sandbox. */
  readOnlyMounts?: ReadOnlyMount[];
  /** Seconds, merged into timing.json (e.g. agent_install). */
  timing?: Record<string, number>;
  /** Facts merged into config.json (agent version, how it was installed). */
  record?: Record<string, unknown>;
  /** Called once when the rollout ends, whatever happened. */
  release?(): Promise<void>;
}

export interface HostPreparationRequest {
  task: Task;
  sandboxKind: SandboxKind;
  /** Whether the sandbox gets a network (false: loopback only). */
  network: boolean;
  /** The gateway's port on the host's loopback, when the agent calls a model. */
  /** `host`: where the gateway listens when it is not this machine's loopback (a SLURM node's rollout). */
  hostService?: { port: number; host?: string; originKey?: string } | null;
  /** The sandbox brings its own way to the gateway (SandboxBackend.relaysGateway); else the agent brings one. */
  sandboxRelays?: boolean;
  signal: AbortSignal;
}

export interface AgentContext {
  task: Task;
  sandbox: Sandbox;
  instruction: string;
  /** The agent's wall-clock limit (null: none). The rollout also aborts `signal` when it passes. */
  timeoutSec: number | null;
  signal: AbortSignal;
  /** Host folder of this rollout; the agent may write under agent/ and trajectory/. */
  rolloutDir: string;
  model: string | null;
  modelAccess: ModelAccess | null;
  /** Environment the user passed for the agent (--agent-env). */
  env: Record<string, string>;
  /** Append one event to trajectory/acp_trajectory.jsonl. */
  record(event: TrajectoryEvent): void;
  /** What prepareHost returned, when the agent has one. */
  prepared?: HostPreparation;
}

export interface AgentRunResult {
  nToolCalls: number;
  /** How the trajectory was obtained, upstream's `trajectory_source` (oracle, acp, ...). */
  trajectorySource: string | null;
  /** A failure of the policy's own making (the agent program exited with an error). */
  error?: { category: "agent_error"; message: string };
  /** Seconds merged into timing.json (e.g. agent_start: sandbox ready to the first model call). */
  timing?: Record<string, number>;
  /** Skill invocations seen in the trajectory (result.json n_skill_invocations). */
  nSkillInvocations?: number;
}

export interface Agent {
  readonly name: string;
  /** Whether rollouts of this agent call a model (oracle and nop never do). */
  readonly usesModel: boolean;
  /** Whether the agent gives the policy the task's MCP servers and skills_dir (the in-sandbox CLIs do). */
  readonly offersTaskTools?: boolean;
  /** Whether the task's solution is made visible to this agent (only the oracle's). */
  readonly seesSolution: boolean;
  /** Host work before the sandbox is made (install a bundle once): failures here are `agent_setup`. */
  prepareHost?(request: HostPreparationRequest): Promise<HostPreparation>;
  /** Work before the clock starts (install, upload): failures here are `agent_setup`. */
  setup?(ctx: AgentContext): Promise<void>;
  run(ctx: AgentContext): Promise<AgentRunResult>;
}
