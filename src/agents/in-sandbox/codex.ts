// Codex (`codex exec --json`), pointed at the gateway through a custom model provider on the
// Responses API (the built-in provider ignores base-URL overrides; wire_api "chat" is refused).
import type { TrajectoryEvent } from "../types.js";
import { INSTRUCTION } from "./agent.js";
import type { CliAgentDef } from "./definition.js";
import { capText, jsonLines, obj, type ParsedRun, str, toolKind } from "./events.js";
import { codexMcpToml } from "./mcp.js";

const CODEX_VERSION = "0.171.0";

const TRIPLES: Record<string, string> = {
  x64: "x86_64-unknown-linux-musl",
  arm64: "aarch64-unknown-linux-musl",
};

const toml = (s: string) => JSON.stringify(s);

export const codexDef: CliAgentDef = {
  name: "codex",
  bundle: { name: "codex", version: CODEX_VERSION, packages: [`@openai/codex@${CODEX_VERSION}`] },
  // The static (musl) binary runs in any Linux image; the npm launcher around it would need Node.
  binary: async () =>
    `node_modules/@openai/codex-linux-${process.arch}/vendor/${TRIPLES[process.arch] ?? TRIPLES.x64}/bin/codex`,
  glibc: false,
  skillsHome: ".agents/skills",
  configFiles: (l) => [
    {
      path: ".codex/config.toml",
      content: [
        `model = ${toml(l.model)}`,
        `model_provider = "benchflow"`,
        `approval_policy = "never"`,
        `sandbox_mode = "danger-full-access"`,
        "check_for_update_on_startup = false",
        "",
        // Its analytics exporter retries an unreachable host for ~5 s before codex may exit.
        "[analytics]",
        "enabled = false",
        "",
        "[model_providers.benchflow]",
        `name = "BenchFlow gateway"`,
        `base_url = ${toml(`${l.gatewayOrigin}/v1`)}`,
        `env_key = ${toml(l.keyEnv)}`,
        `wire_api = "responses"`,
        ...codexMcpToml(l.mcpServers),
      ].join("\n"),
    },
  ],
  env: () => ({ CODEX_DISABLE_UPDATE_CHECK: "1", NO_COLOR: "1" }),
  args: () => [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    INSTRUCTION,
  ],
  parse: parseCodexJson,
};

export function parseCodexJson(stdout: string): ParsedRun {
  const events: TrajectoryEvent[] = [];
  const started = new Map<string, Record<string, unknown>>();
  let nToolCalls = 0;
  let nSkillInvocations = 0;
  let error: string | null = null;
  for (const line of jsonLines(stdout)) {
    const item = obj(line.item);
    const id = str(item.id);
    if (line.type === "item.started") started.set(id, item);
    if (line.type === "turn.failed")
      error = `reported an error: ${str(obj(line.error).message) || "turn failed"}`;
    if (line.type !== "item.completed") continue;
    started.delete(id);
    const type = str(item.type);
    if (type === "agent_message" && str(item.text))
      events.push({ type: "agent_message", text: str(item.text) });
    else if (type === "reasoning" && str(item.text))
      events.push({ type: "agent_thought", text: str(item.text) });
    else if (isTool(type)) {
      nToolCalls++;
      if (/SKILL\.md/.test(JSON.stringify(item.command ?? ""))) nSkillInvocations++;
      events.push(toolEvent(item));
    }
  }
  for (const item of started.values()) {
    if (!isTool(str(item.type))) continue;
    nToolCalls++;
    events.push(toolEvent(item, "pending"));
  }
  return { events, nToolCalls, nSkillInvocations, error };
}

function isTool(type: string): boolean {
  return ["command_execution", "file_change", "mcp_tool_call", "web_search", "collab_tool_call"].includes(
    type,
  );
}

function toolEvent(item: Record<string, unknown>, open?: "pending"): TrajectoryEvent {
  const type = str(item.type);
  const { id, type: _t, status, aggregated_output, exit_code, result, error, ...input } = item;
  const failed = status === "failed" || (typeof exit_code === "number" && exit_code !== 0) || error != null;
  const output =
    type === "command_execution"
      ? { output: capText(aggregated_output), exit_code }
      : (result ?? error ?? null);
  return {
    type: "tool_call",
    tool_call_id: str(id),
    title: type === "mcp_tool_call" ? `${str(item.server)}.${str(item.tool)}` : type,
    kind: toolKind(type),
    status: open ?? (failed ? "failed" : "completed"),
    raw_input: input,
    raw_output: output,
  };
}
