// Gemini CLI (`gemini -p ... --output-format stream-json`), run by the bundle's Node, pointed at the
// gateway through GOOGLE_GEMINI_BASE_URL with the rollout's credential as GEMINI_API_KEY: it speaks
// Gemini's own generateContent API (the gateway's gemini-generate-content dialect). Its settings pick
// API-key auth, turn off telemetry, update checks and folder trust (the sandbox is the workspace).
import type { TrajectoryEvent } from "../types.js";
import { INSTRUCTION } from "./agent.js";
import type { CliAgentDef } from "./definition.js";
import { jsonLines, obj, type ParsedRun, StartedCalls, str } from "./events.js";
import { geminiMcp } from "./mcp.js";

// The newest release whose bundle runs on Node 20 (its SDK is @google/genai 1.30.0).
const GEMINI_CLI_VERSION = "0.61.0";
const SCRIPT = "node_modules/@google/gemini-cli/bundle/gemini.js";

export const geminiCliDef: CliAgentDef = {
  name: "gemini-cli",
  bundle: {
    name: "gemini-cli",
    version: GEMINI_CLI_VERSION,
    packages: [`@google/gemini-cli@${GEMINI_CLI_VERSION}`],
    withNode: true,
  },
  binary: async () => "node/bin/node",
  // The bundle's Node is glibc's build.
  glibc: true,
  skillsHome: ".gemini/skills",
  configFiles: (l) => [
    {
      path: ".gemini/settings.json",
      content: JSON.stringify(
        {
          security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
          ...(l.mcpServers.length > 0 ? { mcpServers: geminiMcp(l.mcpServers) } : {}),
        },
        null,
        2,
      ),
    },
  ],
  env: (l, key) => ({
    GOOGLE_GEMINI_BASE_URL: l.gatewayOrigin,
    GEMINI_API_KEY: key,
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    // It would relaunch itself as a child Node (for a larger heap): the declared agent would sit idle
    // and its model calls be another process's (recorded as `other`, in no row). One process.
    GEMINI_CLI_NO_RELAUNCH: "true",
    NO_COLOR: "1",
  }),
  args: (l) => [
    `${l.bundleDir}/${SCRIPT}`,
    "-p",
    INSTRUCTION,
    "-m",
    l.model,
    "--output-format",
    "stream-json",
    "--yolo",
  ],
  parse: parseGeminiStreamJson,
};

/** Gemini CLI's stream-json: init, message (deltas of the assistant's text), tool_use, tool_result, error, result. */
export function parseGeminiStreamJson(stdout: string): ParsedRun {
  const events: TrajectoryEvent[] = [];
  const calls = new StartedCalls();
  let nToolCalls = 0;
  let nSkillInvocations = 0;
  let error: string | null = null;
  let text = "";
  const flush = (ts?: string) => {
    if (text !== "") events.push({ type: "agent_message", text, ts });
    text = "";
  };
  for (const line of jsonLines(stdout)) {
    const ts = str(line.timestamp) || undefined;
    if (line.type === "message" && line.role === "assistant") text += str(line.content);
    else if (line.type === "tool_use") {
      flush(ts);
      nToolCalls++;
      const tool = str(line.tool_name);
      if (tool === "activate_skill") nSkillInvocations++;
      const call = calls.start(str(line.tool_id), tool, line.parameters, ts);
      events.push(call);
    } else if (line.type === "tool_result") {
      calls.finish(
        str(line.tool_id),
        line.status === "success",
        line.output ?? obj(line.error).message ?? null,
      );
    } else if (line.type === "error")
      error = `reported an error: ${str(line.message) || JSON.stringify(line)}`;
    else if (line.type === "result" && line.status !== "success")
      error = `ended with status ${str(line.status)}: ${str(obj(line.error).message) || "no message"}`;
  }
  flush();
  return { events, nToolCalls, nSkillInvocations, error };
}
