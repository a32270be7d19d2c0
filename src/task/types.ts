// What a loaded task looks like to the rest of the program. Both layouts (native task.md and the
// Harbor split layout) load into this one shape; nothing downstream knows which layout it was.

// Each key's own type lives with its reader (artifacts.ts, config-reader.ts, ...); none of them reads
// this file back.
import type { ArtifactSpec } from "./artifacts.js";
import type { NetworkMode } from "./config-reader.js";
import type { TaskHealthcheck } from "./healthcheck.js";
import type { SetupCommand } from "./setup-commands.js";
import type { TaskLayout } from "./source.js";
import type { VerifierEnvironmentMode } from "./verifier-mode.js";

/** One `COPY`/`ADD` of the task's Dockerfile, resolved against the build context. */
export interface DockerfileCopy {
  /** Absolute host paths of the sources (inside environment/). */
  sources: string[];
  /** Absolute destination inside the sandbox (a directory when it ends in `/` or there are several sources). */
  dest: string;
  /** The instruction's line number, for messages. */
  line: number;
}

/** What the namespace sandbox can apply from a Dockerfile without an image. */
export interface DockerfileSpec {
  path: string;
  baseImage: string | null;
  copies: DockerfileCopy[];
  env: Record<string, string>;
  workdir: string | null;
  user: string | null;
  /** RUN steps (their text), which only an image can apply. */
  runSteps: string[];
}

/** How an agent reaches an MCP server (Harbor's names; `http` in task.toml is read as streamable-http). */
export type McpTransport = "sse" | "streamable-http" | "stdio";

/** One `[[environment.mcp_servers]]` entry: a command the agent spawns in the sandbox, or a URL it reaches from there. */
export interface McpServer {
  name: string;
  transport: McpTransport;
  /** sse and streamable-http: the server's URL as seen from inside the sandbox. */
  url: string | null;
  /** stdio: the command and its arguments, run inside the sandbox as the agent user. */
  command: string | null;
  args: string[];
  cwd: string | null;
  env: Record<string, string>;
  headers: Record<string, string>;
}

export interface TaskConfig {
  agent: {
    timeoutSec: number | null;
    user: string | null;
    networkMode: NetworkMode | null;
    /** Upstream's prompt_prefix: put before every prompt the agent gets. */
    promptPrefix: string | null;
  };
  verifier: {
    timeoutSec: number;
    env: Record<string, string>;
    user: string | null;
    /** [lo, hi]; only ever wider than [0, 1]. */
    rewardRange: [number, number];
    /** Harbor's [verifier].network_mode: the network around the verifier; null (or absent) keeps the baseline. */
    networkMode?: NetworkMode | null;
    /** [verifier.hardening]: upstream's one flag; absent, every step of hardening runs. */
    hardening?: { cleanupConftests: boolean; restoreBuildFiles: boolean };
    /** Harbor's [verifier].environment_mode: "separate" runs the test in a fresh sandbox; null or absent: shared. */
    environmentMode?: VerifierEnvironmentMode | null;
  };
  sandbox: {
    networkMode: NetworkMode;
    allowedHosts: string[];
    workdir: string | null;
    env: Record<string, string>;
    cpus: number;
    memoryMb: number;
    storageMb: number;
    gpus: number;
    dockerImage: string | null;
    buildTimeoutSec: number;
    /** Run after the sandbox starts, before the agent is set up; null when the task has none. */
    healthcheck: TaskHealthcheck | null;
    /** Run after the healthcheck, before the agent is set up. */
    setupCommands: SetupCommand[];
    /** A folder of skill folders inside the image (Harbor's skills_dir), placed for each agent. */
    skillsDir: string | null;
    mcpServers: McpServer[];
  };
  oracle: {
    env: Record<string, string>;
    timeoutSec: number | null;
  };
  /** Harbor's `artifacts`: sandbox paths kept in the rollout's artifacts/ after the agent. */
  artifacts: ArtifactSpec[];
  /** Free-form metadata (difficulty, category, tags, ...). */
  metadata: Record<string, unknown>;
  /** `[[steps]]` of a multi-step task (Harbor layout), in order; empty or absent for a one-step task. */
  steps?: StepConfig[];
  /** `multi_step_reward_strategy`: how the steps' rewards make the rollout's (Harbor's default mean). */
  multiStepRewardStrategy?: "mean" | "final";
}

/** One `[[steps]]` entry of task.toml, defaults applied as Harbor's code applies them. */
export interface StepConfig {
  name: string;
  /** `[steps.agent].timeout_sec`, else `[agent].timeout_sec`. */
  agentTimeoutSec: number | null;
  /** `[steps.verifier].timeout_sec`, else 600 (Harbor's StepConfig default, not the task's value). */
  verifierTimeoutSec: number;
  /** `[verifier].env` overlaid by `[steps.verifier].env`. */
  verifierEnv: Record<string, string>;
  /** A number gates the step's `reward`; a table gates each key; a missing key counts as -inf. */
  minReward: number | Record<string, number> | null;
}

/** A step with its files resolved: steps/<name>/{instruction.md, tests/, solution/, workdir/}. */
export interface TaskStep extends StepConfig {
  instruction: string;
  /** Folders uploaded to the verifier mount in order: the shared tests/ (if any), then the step's. */
  testsDirs: string[];
  solutionDir: string | null;
  solveScript: string | null;
  /** steps/<name>/workdir/: its contents are uploaded into the workdir before the step. */
  workdirDir: string | null;
}

export interface Task {
  /** The task's folder name: `task_name` in results. */
  name: string;
  /** Absolute path of the task folder. */
  dir: string;
  layout: TaskLayout;
  /** The prompt handed to the agent. */
  instruction: string;
  config: TaskConfig;
  /** Absolute path of environment/ (the build context). */
  environmentDir: string;
  dockerfile: DockerfileSpec | null;
  /** Absolute path of the verifier folder (verifier/ or tests/) and where it goes in the sandbox. */
  verifierDir: string;
  verifierMount: "/verifier" | "/tests";
  /** The entry script inside verifierDir, e.g. "test.sh". */
  testScript: string;
  /** The reference solution folder (oracle/ or solution/), if any, and where it goes. */
  solutionDir: string | null;
  solutionMount: "/oracle" | "/solution";
  /** The entry script inside solutionDir, e.g. "solve.sh". */
  solveScript: string | null;
  /** The steps of a multi-step task, files resolved; empty for a one-step task. */
  steps?: TaskStep[];
  /** Things the loader accepted but wants the user to know (keys we do not act on yet, RUN steps, ...). */
  warnings: string[];
}

/** Where the task's files sit in the sandbox; the workspace is the task's workdir or /app. */
export function workspaceOf(task: Task): string {
  return task.config.sandbox.workdir ?? task.dockerfile?.workdir ?? "/app";
}

/** The prompt the agent gets for an instruction: upstream's prompt_prefix first. */
export function promptOf(task: Task, instruction: string = task.instruction): string {
  return `${task.config.agent.promptPrefix ?? ""}${instruction}`;
}
