// Checks on one conversation, upstream's rules (its validate_prime_sft_row): roles, tool calls matched
// to declared tools, every tool output answering an earlier call. A call left without an output is
// fine (upstream's too: an agent may stop after calling). Returns problems as sentences; an empty list
// means the messages are fine.
import { isRecord } from "../../util/jsonl.js";

const ROLES = new Set(["system", "user", "assistant", "tool"]);
const BANNED_KEYS = [
  "reasoning_content",
  "thinking_blocks",
  "private_reasoning",
  "provider_specific_fields",
  "function_call",
];

export function declaredToolNames(tools: unknown, problems: string[]): Set<string> {
  const names = new Set<string>();
  if (tools === undefined || tools === null) return names;
  // Datasets stored through Arrow often hold the tool list as one JSON string; upstream reads it so.
  if (typeof tools === "string") {
    try {
      return declaredToolNames(JSON.parse(tools), problems);
    } catch (err) {
      problems.push(`tool definitions are a string that is not valid JSON (${(err as Error).message})`);
      return names;
    }
  }
  if (!Array.isArray(tools)) {
    problems.push("tool definitions must be a list");
    return names;
  }
  tools.forEach((t, i) => {
    const fn = isRecord(t) && isRecord(t.function) ? t.function : t;
    if (isRecord(fn) && typeof fn.name === "string" && fn.name !== "") names.add(fn.name);
    else problems.push(`tool definition ${i} has no name`);
  });
  return names;
}

function argumentsProblem(args: unknown, objectOnly: boolean): string | null {
  if (isRecord(args)) return null;
  if (objectOnly) return "arguments must be a JSON object";
  if (typeof args !== "string") return "arguments must be a JSON object or a string holding one";
  try {
    return isRecord(JSON.parse(args)) ? null : "arguments must decode to a JSON object";
  } catch {
    return "arguments are not valid JSON";
  }
}

export interface MessageCheck {
  problems: string[];
  toolCalls: number;
}

export function checkMessages(
  messages: unknown,
  tools: Set<string>,
  opts: { objectArguments: boolean },
): MessageCheck {
  const problems: string[] = [];
  let toolCalls = 0;
  if (!Array.isArray(messages) || messages.length === 0)
    return { problems: ["messages must be a non-empty list"], toolCalls };
  // Ids of calls not yet answered (a call stays open until its output comes, however late).
  const pending = new Set<string>();
  let assistants = 0;
  for (const [i, m] of messages.entries()) {
    const at = `message ${i}`;
    if (!isRecord(m)) {
      problems.push(`${at} is not an object`);
      continue;
    }
    const role = String(m.role);
    if (!ROLES.has(role)) problems.push(`${at} has role "${role}"; expected system, user, assistant or tool`);
    if (role === "system" && i !== 0) problems.push(`${at} is a system message after the first message`);
    for (const k of BANNED_KEYS)
      if (k in m) problems.push(`${at} carries "${k}", which rows must not contain`);
    const calls = m.tool_calls;
    const hasCalls = Array.isArray(calls) && calls.length > 0;
    if (!("content" in m) && !("tool_calls" in m)) problems.push(`${at} has neither content nor tool_calls`);
    if (role === "assistant") assistants++;
    if (calls !== undefined && !Array.isArray(calls)) problems.push(`${at}: tool_calls must be a list`);
    if (hasCalls && role !== "assistant") problems.push(`${at}: only assistant messages may have tool_calls`);
    if (role === "tool" && (typeof m.tool_call_id !== "string" || m.tool_call_id === ""))
      problems.push(`${at} is a tool output without a tool_call_id`);
    if (hasCalls && tools.size === 0) problems.push(`${at} has tool calls but the row declares no tools`);
    if (hasCalls) {
      for (const [j, c] of (calls as unknown[]).entries()) {
        toolCalls++;
        const where = `${at} tool call ${j}`;
        const fn = isRecord(c) && isRecord(c.function) ? c.function : undefined;
        if (!isRecord(c) || typeof c.id !== "string" || c.id === "") {
          problems.push(`${where} has no id`);
          continue;
        }
        if (c.type !== "function")
          problems.push(`${where} has type "${String(c.type)}"; expected "function"`);
        if (!fn || typeof fn.name !== "string" || fn.name === "") {
          problems.push(`${where} has no function name`);
          continue;
        }
        if (tools.size > 0 && !tools.has(fn.name))
          problems.push(`${where} calls "${fn.name}", which no tool declares`);
        const bad = argumentsProblem(fn.arguments, opts.objectArguments);
        if (bad) problems.push(`${where}: ${bad}`);
        pending.add(c.id);
      }
    }
    if (role === "tool" && typeof m.tool_call_id === "string" && m.tool_call_id !== "") {
      const id = m.tool_call_id;
      if (!pending.has(id)) {
        problems.push(
          `${at} is a tool output for "${String(id)}", which no earlier tool call is waiting for`,
        );
      } else {
        pending.delete(id);
      }
    }
  }
  if (assistants === 0) problems.push("no assistant message");
  return { problems, toolCalls };
}
