// One table of agents: adding one is a file plus a line here.
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { nearest } from "../util/nearest.js";
import { createBenchAgent } from "./bench-agent/index.js";
import { acpCommandDef } from "./in-sandbox/acp-command.js";
import { createCliAgent } from "./in-sandbox/agent.js";
import {
  CLI_AGENT_DEFS,
  createClaudeCodeAgent,
  createCodexAgent,
  createOpencodeAgent,
} from "./in-sandbox/index.js";
import type { SkillMode } from "./in-sandbox/skills.js";
import { nopAgent, oracleAgent } from "./oracle.js";
import type { Agent } from "./types.js";

/** Run-wide choices an agent may use (skills for the agent CLIs). */
export interface AgentOptions {
  skillMode?: SkillMode;
  skillsDir?: string | null;
}

type AgentFactory = (options?: AgentOptions) => Agent;

const cli = (o: AgentOptions | undefined) => ({ mode: o?.skillMode, dir: o?.skillsDir ?? null });

const agents: Record<string, AgentFactory> = {
  oracle: () => oracleAgent,
  nop: () => nopAgent,
  "bench-agent": () => createBenchAgent(),
  "claude-code": (o) => createClaudeCodeAgent(cli(o)),
  "claude-agent-acp": (o) => createCliAgent(CLI_AGENT_DEFS["claude-agent-acp"], cli(o)),
  codex: (o) => createCodexAgent(cli(o)),
  "codex-acp": (o) => createCliAgent(CLI_AGENT_DEFS["codex-acp"], cli(o)),
  opencode: (o) => createOpencodeAgent(cli(o)),
  "qwen-code": (o) => createCliAgent(CLI_AGENT_DEFS["qwen-code"], cli(o)),
  kilo: (o) => createCliAgent(CLI_AGENT_DEFS.kilo, cli(o)),
  "gemini-cli": (o) => createCliAgent(CLI_AGENT_DEFS["gemini-cli"], cli(o)),
  pi: (o) => createCliAgent(CLI_AGENT_DEFS.pi, cli(o)),
};

function agentNames(): string[] {
  return Object.keys(agents);
}

export function registerAgent(name: string, factory: AgentFactory): void {
  agents[name] = factory;
}

export function resolveAgent(name: string, options?: AgentOptions): Agent {
  if (name.startsWith("acp:")) return createCliAgent(acpCommandDef(name), cli(options));
  const factory = agents[name];
  if (!factory) {
    const near = nearest(name, agentNames());
    const hint = near.length > 0 ? ` Did you mean ${near.join(" or ")}?` : "";
    throw new UserInputError(
      `unknown agent "${name}" (${opt("agent")}).${hint} Known agents: ${agentNames().join(", ")}.`,
    );
  }
  return factory(options);
}
