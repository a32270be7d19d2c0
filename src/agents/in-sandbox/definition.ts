// What one agent CLI is to BenchFlow (its bundle, config files, command line and the parser of its
// output), and what its launch keeps between the steps of one rollout. Its own file, so the agent
// (agent.ts) and the container fallback (image-install.ts) both read it without reading each other.
import type { McpServer } from "../../task/types.js";
import type { BundleSpec } from "./bundle.js";
import type { ParsedRun } from "./events.js";

/** What an agent's config and command line are made from. */
export interface LaunchInfo {
  /** The gateway inside the sandbox, without /v1 (e.g. http://127.0.0.1:41234). */
  gatewayOrigin: string;
  /** The model name the agent is told (the gateway sends the user's model upstream whatever it asks). */
  model: string;
  /** Name of the environment variable that holds the rollout's credential. */
  keyEnv: string;
  workdir: string;
  /** The task's MCP servers, written into the agent's own MCP config. */
  mcpServers: McpServer[];
  /** Where the agent's bundle is mounted inside the sandbox (absolute). */
  bundleDir: string;
}

/** A file the launch script writes relative to $HOME before the agent starts. */
export interface ConfigFile {
  path: string;
  content: string;
  /** A program (a wrapper the agent starts): made executable. */
  executable?: boolean;
}

export interface CliAgentDef {
  name: string;
  bundle: BundleSpec;
  /** The CLI's executable, relative to the bundle folder. */
  binary(): Promise<string>;
  /** Whether that executable is linked against glibc (a static one runs in any image). */
  glibc: boolean;
  /** The musl build's executable, relative to a bundle installed with npm --libc=musl (for musl images). */
  muslBinary?(): Promise<string>;
  /** Where the agent looks for skills, relative to $HOME. */
  skillsHome: string;
  configFiles(l: LaunchInfo): ConfigFile[];
  /**
   * Who declares itself the agent to the sandbox's relay: the launched program itself (the default),
   * or a process it starts ("delegated": an ACP client whose adapter, or the adapter's own child,
   * calls the model; that process declares itself through $BF_DECLARE_EXEC).
   */
  declares?: "self" | "delegated";
  /** Variables set to $HOME/<path> before the launch (paths of config files the agent must run). */
  homeEnv?: Record<string, string>;
  /** trajectory_source in result.json; "<name>-json" when the agent's own JSON output is parsed. */
  trajectorySource?: string;
  env(l: LaunchInfo, apiKey: string): Record<string, string>;
  /** Arguments after the binary; INSTRUCTION marks where the task's instruction goes. */
  args(l: LaunchInfo): string[];
  parse(stdout: string): ParsedRun;
}

/** One rollout's launch, from the host's preparation to the run. */
export interface LaunchState {
  readyAt: number;
  stagedSkills: string | null;
  relay: boolean;
  binary: string;
  binDir: string;
  /** The loader checked before launch; null when the agent was installed into the image for its libc. */
  loader: string | null;
}
