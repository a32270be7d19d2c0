// What a loaded task looks like to the rest of the program. Both layouts (native task.md and the
// Harbor split layout) load into this one shape; nothing downstream knows which layout it was.

export type TaskLayout = "native" | "split";
export type NetworkMode = "no-network" | "public" | "allowlist";

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

export interface TaskConfig {
  agent: {
    timeoutSec: number | null;
    user: string | null;
    networkMode: NetworkMode | null;
  };
  verifier: {
    timeoutSec: number;
    env: Record<string, string>;
    user: string | null;
    /** [lo, hi]; only ever wider than [0, 1]. */
    rewardRange: [number, number];
    /** Harbor's [verifier].network_mode: the network around the verifier; null (or absent) keeps the baseline. */
    networkMode?: NetworkMode | null;
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
  };
  oracle: {
    env: Record<string, string>;
    timeoutSec: number | null;
  };
  /** Free-form metadata (difficulty, category, tags, ...). */
  metadata: Record<string, unknown>;
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
  /** Things the loader accepted but wants the user to know (keys we do not act on yet, RUN steps, ...). */
  warnings: string[];
}

/** Where the task's files sit in the sandbox; the workspace is the task's workdir or /app. */
export function workspaceOf(task: Task): string {
  return task.config.sandbox.workdir ?? task.dockerfile?.workdir ?? "/app";
}
