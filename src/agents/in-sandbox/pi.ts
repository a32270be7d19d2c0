// pi (Mario Zechner's coding agent, `pi -p --mode json`), run by the bundle's Node in its own print
// mode (its ACP adapter, pi-acp, hangs at session/new on Node 20 releases): the gateway is a provider
// of its own in ~/.pi/agent/models.json (OpenAI Chat Completions), the key read from the rollout's
// variable, startup network off (--offline) and no session file.
import type { TrajectoryEvent } from "../types.js";
import { INSTRUCTION } from "./agent.js";
import type { CliAgentDef } from "./definition.js";
import { jsonLines, obj, type ParsedRun, StartedCalls, str } from "./events.js";

// The newest release that runs on Node 20 (later ones need Node 22).
const PI_VERSION = "0.73.1";
const SCRIPT = "node_modules/@mariozechner/pi-coding-agent/dist/cli.js";

export const piDef: CliAgentDef = {
  name: "pi",
  bundle: {
    name: "pi",
    version: PI_VERSION,
    packages: [`@mariozechner/pi-coding-agent@${PI_VERSION}`],
    withNode: true,
  },
  binary: async () => "node/bin/node",
  glibc: true,
  skillsHome: ".pi/agent/skills",
  configFiles: (l) => [
    {
      path: ".pi/agent/models.json",
      content: JSON.stringify(
        {
          providers: {
            benchflow: {
              baseUrl: `${l.gatewayOrigin}/v1`,
              api: "openai-completions",
              // The name of the variable that holds the key: pi reads it from the environment.
              apiKey: l.keyEnv,
              models: [
                {
                  id: l.model,
                  name: l.model,
                  reasoning: false,
                  input: ["text"],
                  contextWindow: 131072,
                  maxTokens: 16384,
                },
              ],
            },
          },
        },
        null,
        2,
      ),
    },
  ],
  env: () => ({ PI_OFFLINE: "1", NO_COLOR: "1" }),
  args: (l) => [
    `${l.bundleDir}/${SCRIPT}`,
    "-p",
    "--mode",
    "json",
    "--provider",
    "benchflow",
    "--model",
    l.model,
    "--no-session",
    "--offline",
    INSTRUCTION,
  ],
  parse: parsePiJson,
};

/** pi's JSON events: assistant messages (text, thinking), tool executions, and an assistant turn that ended in error. */
export function parsePiJson(stdout: string): ParsedRun {
  const events: TrajectoryEvent[] = [];
  const calls = new StartedCalls();
  let nToolCalls = 0;
  let nSkillInvocations = 0;
  let error: string | null = null;
  for (const line of jsonLines(stdout)) {
    if (line.type === "message_end") {
      const m = obj(line.message);
      if (m.role !== "assistant") continue;
      for (const part of Array.isArray(m.content) ? m.content : []) {
        const p = obj(part);
        if (p.type === "text" && str(p.text)) events.push({ type: "agent_message", text: str(p.text) });
        else if (p.type === "thinking" && str(p.thinking))
          events.push({ type: "agent_thought", text: str(p.thinking) });
      }
      if (m.stopReason === "error" || m.stopReason === "aborted")
        error = `reported an error: ${str(m.errorMessage) || str(m.stopReason)}`;
    } else if (line.type === "tool_execution_start") {
      nToolCalls++;
      const tool = str(line.toolName);
      if (tool === "skill") nSkillInvocations++;
      const call = calls.start(str(line.toolCallId), tool, line.args);
      events.push(call);
    } else if (line.type === "tool_execution_end") {
      const content = obj(line.result).content;
      const text = (Array.isArray(content) ? content : []).map((c) => str(obj(c).text)).join("");
      calls.finish(str(line.toolCallId), line.isError !== true, text);
    }
  }
  return { events, nToolCalls, nSkillInvocations, error };
}
