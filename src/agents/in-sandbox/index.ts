// The real agent CLIs: claude-code, codex, opencode and kilo run by their own command lines;
// claude-agent-acp, codex-acp and any acp: agent through the Agent Client Protocol (acp.ts).
import type { Agent } from "../types.js";
import { claudeAgentAcpDef, codexAcpDef } from "./acp.js";
import { type CliAgentOptions, createCliAgent } from "./agent.js";
import { claudeCodeDef } from "./claude-code.js";
import { codexDef } from "./codex.js";
import { geminiCliDef } from "./gemini-cli.js";
import { kiloDef, opencodeDef } from "./opencode.js";
import { piDef } from "./pi.js";
import { qwenCodeDef } from "./qwen-code.js";

export type { CliAgentOptions } from "./agent.js";
export { agentCacheDir, type BundleSpec, ensureBundle } from "./bundle.js";
export type { CliAgentDef } from "./definition.js";
export { parseSkillMode, type SkillMode } from "./skills.js";
export { claudeCodeDef, codexDef, opencodeDef };

export const CLI_AGENT_DEFS = {
  "claude-code": claudeCodeDef,
  codex: codexDef,
  opencode: opencodeDef,
  "claude-agent-acp": claudeAgentAcpDef,
  "codex-acp": codexAcpDef,
  "qwen-code": qwenCodeDef,
  kilo: kiloDef,
  "gemini-cli": geminiCliDef,
  pi: piDef,
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
