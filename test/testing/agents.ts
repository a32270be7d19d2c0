// Shared by the agent-CLI tests: each agent's shell tool in its own vocabulary, and a runner that
// serves a script, runs an Evaluation and returns what it wrote.
import { promises as fs } from "node:fs";
import path from "node:path";
import { Evaluation, type EvaluationResult } from "../../src/job/evaluation.js";
import type { EvaluationSettings } from "../../src/job/plan.js";
import {
  type EndpointScript,
  type RecordedRequest,
  type ScriptedReply,
  startScriptedEndpoint,
} from "../../src/scripted-endpoint/scripted-server.js";
import { rollouts } from "./bench.js";

export const CLI_AGENTS = ["claude-code", "codex", "opencode"] as const;
export type CliAgent = (typeof CLI_AGENTS)[number];
/** A tool vocabulary: the three CLIs', Qwen Code's (an ACP agent; agents-acp.test.ts) and Gemini CLI's. */
export type Vocabulary = CliAgent | "qwen-code" | "gemini-cli" | "pi";

export const SKILLS_HOME: Record<CliAgent, string> = {
  "claude-code": ".claude/skills",
  codex: ".agents/skills",
  opencode: ".opencode/skills",
};

/** One shell command as a tool call in the agent's own vocabulary. */
export function shellCall(
  agent: Vocabulary,
  command: string,
): { name: string; arguments: Record<string, unknown> } {
  if (agent === "codex") return { name: "exec_command", arguments: { cmd: command } };
  if (agent === "pi") return { name: "bash", arguments: { command } };
  // Qwen Code is a Gemini CLI fork: the same shell tool.
  if (agent === "qwen-code" || agent === "gemini-cli")
    return { name: "run_shell_command", arguments: { command } };
  return {
    name: agent === "claude-code" ? "Bash" : "bash",
    arguments: { command, description: "run a command" },
  };
}

/** The agent's skill tool, where it has one (codex reads SKILL.md files with its shell instead). */
export function skillCall(
  agent: CliAgent,
  skill: string,
): { name: string; arguments: Record<string, unknown> } | null {
  if (agent === "claude-code") return { name: "Skill", arguments: { skill } };
  if (agent === "opencode") return { name: "skill", arguments: { name: skill } };
  return null;
}

/**
 * A script for one agent: OpenCode's title call gets its own conversation; Qwen Code's first call
 * already holds one assistant turn (its canned "Got it" after the setup context), so its replies
 * start one turn later.
 */
export function scriptFor(agent: Vocabulary, conversations: EndpointScript["conversations"]): EndpointScript {
  if (agent === "qwen-code")
    return {
      conversations: conversations.map((c) => ({
        ...c,
        replies: [{ content: "(never asked)" }, ...c.replies],
      })),
    };
  const title =
    agent === "opencode"
      ? [{ match: "Generate a title", replies: [{ content: "A title" }] as ScriptedReply[] }]
      : [];
  return { conversations: [...title, ...conversations] };
}

export interface AgentRun {
  result: EvaluationResult;
  requests: RecordedRequest[];
  found: { dir: string; result: Record<string, any> | null }[];
}

export async function runAgent(
  script: EndpointScript,
  settings: Omit<EvaluationSettings, "policy" | "model"> & {
    captureTokens?: boolean;
    /** More of the policy's settings (bounds, sampling). */
    policy?: Omit<NonNullable<EvaluationSettings["policy"]>, "baseUrl" | "captureTokens">;
  },
): Promise<AgentRun> {
  const endpoint = await startScriptedEndpoint({ script });
  try {
    const { captureTokens, policy, ...rest } = settings;
    const result = await new Evaluation({
      model: "vllm/scripted",
      retryAttempts: 0,
      env: {},
      ...rest,
      policy: { ...policy, baseUrl: endpoint.baseUrl, captureTokens: captureTokens === true },
    }).run();
    return { result, requests: endpoint.requests, found: await rollouts(settings.jobsDir as string) };
  } finally {
    await endpoint.close();
  }
}

export async function jsonLines(file: string): Promise<Record<string, any>[]> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

export const llmCalls = (rolloutDir: string) =>
  jsonLines(path.join(rolloutDir, "trajectory/llm_trajectory.jsonl"));
export const acpEvents = (rolloutDir: string) =>
  jsonLines(path.join(rolloutDir, "trajectory/acp_trajectory.jsonl"));
export const readJson = async (file: string) => JSON.parse(await fs.readFile(file, "utf8"));
