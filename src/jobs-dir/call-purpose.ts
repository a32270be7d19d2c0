// What a recorded call was for, when the recorder did not say (upstream's files, older gateways).
// OpenCode makes side calls of its own next to the agent's turns: a session title, a summary, a
// compaction of a long history. Upstream tells them apart by the opening of their system prompt, and a
// tool-less OpenCode call is a helper; every other agent's calls are the agent's. trl-sft rows keep
// only the agent's (a title generator is not the policy being trained).
import { isRecord } from "../util/jsonl.js";

/** The agents whose side calls are told apart by their system prompt: OpenCode and its fork Kilo Code. */
const OPENCODE_FAMILY: ReadonlySet<string> = new Set(["opencode", "kilo"]);

/** System-prompt openings of OpenCode's side calls, as upstream's trajectories/call_purpose.py has them. */
const OPENINGS: ReadonlyArray<readonly [string, string]> = [
  ["You are a title generator.", "title"],
  ["Summarize what was done in this conversation.", "summary"],
  ["You are an anchored context summarization assistant", "compaction"],
];

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isRecord)
    .map((part) => String(part.text || part.content || ""))
    .join("\n");
}

/**
 * The system text of a request: chat's system messages (upstream reads only these), and, for the same
 * agent speaking another dialect, Anthropic's `system` and Responses' `instructions`.
 */
function systemText(body: Record<string, unknown>): string {
  const parts = (Array.isArray(body.messages) ? body.messages : [])
    .filter((m) => isRecord(m) && m.role === "system")
    .map((m) => textOf((m as Record<string, unknown>).content));
  if (body.system !== undefined) parts.push(textOf(body.system));
  if (typeof body.instructions === "string") parts.push(body.instructions);
  return parts.join("\n").trimStart();
}

/** `agent` is the rollout's agent name; `body` the request body (undefined when it was not an object). */
export function inferCallPurpose(
  agent: string | null | undefined,
  body: Record<string, unknown> | undefined,
): string {
  if (body === undefined) return "helper";
  if (!OPENCODE_FAMILY.has(agent ?? "")) return "agent";
  const system = systemText(body);
  for (const [opening, purpose] of OPENINGS) if (system.startsWith(opening)) return purpose;
  return Array.isArray(body.tools) && body.tools.length > 0 ? "agent" : "helper";
}
