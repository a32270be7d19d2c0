// The real agent CLIs: claude-code, codex and opencode (upstream's codex-acp and claude-agent-acp
// are accepted as aliases).
import type { Agent } from "../types.js";
import { type CliAgentOptions, createCliAgent } from "./agent.js";
import { claudeCodeDef } from "./claude-code.js";
import { codexDef } from "./codex.js";
import { opencodeDef } from "./opencode.js";

export type { CliAgentOptions } from "./agent.js";
export { agentCacheDir, type BundleSpec, ensureBundle } from "./bundle.js";
export type { CliAgentDef } from "./definition.js";
export { parseSkillMode, type SkillMode } from "./skills.js";
export { claudeCodeDef, codexDef, opencodeDef };

export const CLI_AGENT_DEFS = {
  "claude-code": claudeCodeDef,
  codex: codexDef,
  opencode: opencodeDef,
} as const;
export type CliAgentName = keyof typeof CLI_AGENT_DEFS;

export function createClaudeCodeAgent(opts: CliAgentOptions = {}): Agent {
  return createCliAgent(claudeCodeDef, opts);
}

export function createCodexAgent(opts: CliAgentOptions = {}): Agent {
  return createCliAgent(codexDef, opts);
}

export function createOpencodeAgent(opts: CliAgentOptions = {}): Agent {
  return createCliAgent(opencodeDef, opts);
}
