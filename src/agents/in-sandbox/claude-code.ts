// Claude Code (`claude -p`), pointed at the gateway through ANTHROPIC_BASE_URL (Anthropic Messages
// inbound). Its stream-json output gives messages, thinking and tool calls with their results.
import type { TrajectoryEvent } from "../types.js";
import { INSTRUCTION } from "./agent.js";
import type { CliAgentDef } from "./definition.js";
import { capText, jsonLines, obj, type ParsedRun, str, toolKind } from "./events.js";
import { claudeMcpServers } from "./mcp.js";

const CLAUDE_CODE_VERSION = "2.1.197";

export const claudeCodeDef: CliAgentDef = {
  name: "claude-code",
  bundle: {
    name: "claude-code",
    version: CLAUDE_CODE_VERSION,
    packages: [`@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`],
  },
  // The platform package carries the native binary; its postinstall would only link it.
  binary: async () => `node_modules/@anthropic-ai/claude-code-linux-${process.arch}/claude`,
  glibc: true,
  muslBinary: async () => `node_modules/@anthropic-ai/claude-code-linux-${process.arch}-musl/claude`,
  skillsHome: ".claude/skills",
  // User scope: read in -p mode with no trust prompt (a project's .mcp.json would need approval).
  configFiles: (l) =>
    l.mcpServers.length === 0
      ? []
      : [
          {
            path: ".claude.json",
            content: JSON.stringify({ mcpServers: claudeMcpServers(l.mcpServers) }, null, 2),
          },
        ],
  env: (l, apiKey) => ({
    ANTHROPIC_BASE_URL: l.gatewayOrigin,
    ANTHROPIC_API_KEY: apiKey,
    ANTHROPIC_MODEL: l.model,
    ANTHROPIC_SMALL_FAST_MODEL: l.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: l.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: l.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: l.model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    // Bypassing permissions is refused as root unless Claude Code is told it is sandboxed (it is).
    IS_SANDBOX: "1",
  }),
  args: (l) => [
    "-p",
    INSTRUCTION,
    "--output-format",
    "stream-json",
    "--verbose",
    "--dangerously-skip-permissions",
    "--model",
    l.model,
  ],
  parse: parseClaudeStream,
};

export function parseClaudeStream(stdout: string): ParsedRun {
  const events: TrajectoryEvent[] = [];
  const pending = new Map<string, { name: string; input: unknown; parent: string }>();
  let nToolCalls = 0;
  let nSkillInvocations = 0;
  let error: string | null = null;
  for (const line of jsonLines(stdout)) {
    const content = obj(line.message).content;
    const blocks = Array.isArray(content) ? content.map(obj) : [];
    if (line.type === "assistant") {
      for (const b of blocks) {
        if (b.type === "text" && str(b.text)) events.push({ type: "agent_message", text: str(b.text) });
        if (b.type === "thinking" && str(b.thinking))
          events.push({ type: "agent_thought", text: str(b.thinking) });
        if (b.type === "tool_use") {
          // A subagent's lines name the Task call that started it (null on the main agent's).
          pending.set(str(b.id), { name: str(b.name), input: b.input, parent: str(line.parent_tool_use_id) });
          nToolCalls++;
          if (b.name === "Skill") nSkillInvocations++;
        }
      }
    } else if (line.type === "user") {
      for (const b of blocks) {
        if (b.type !== "tool_result") continue;
        const call = pending.get(str(b.tool_use_id));
        pending.delete(str(b.tool_use_id));
        events.push(
          toolEvent(
            str(b.tool_use_id),
            call,
            b.is_error === true ? "failed" : "completed",
            resultText(b.content),
          ),
        );
      }
    } else if (line.type === "result" && line.is_error === true) {
      error = `reported an error: ${str(line.result) || str(line.subtype) || "unknown"}`;
    }
  }
  // Calls still open when the agent stopped (killed mid-call).
  for (const [id, call] of pending) events.push(toolEvent(id, call, "pending", null));
  return { events, nToolCalls, nSkillInvocations, error };
}

function toolEvent(
  id: string,
  call: { name: string; input: unknown; parent: string } | undefined,
  status: "completed" | "failed" | "pending",
  output: unknown,
): TrajectoryEvent {
  const name = call?.name ?? "unknown";
  return {
    type: "tool_call",
    tool_call_id: id,
    title: name,
    kind: toolKind(name),
    status,
    raw_input: call?.input ?? null,
    raw_output: capText(output),
    ...(call?.parent ? { parent_tool_call_id: call.parent } : {}),
  };
}

function resultText(content: unknown): unknown {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content ?? null;
  return content.map((c) => (obj(c).type === "text" ? str(obj(c).text) : JSON.stringify(c))).join("\n");
}
