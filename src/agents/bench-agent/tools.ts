// The bench-agent's two tools: bash (one shell command in the sandbox, as the agent user, with a time
// limit and the tail of its output) and submit (the agent says it is done).
import type { Sandbox } from "../../sandbox/types.js";
import type { TrajectoryEvent } from "../types.js";
import type { ToolCall } from "./chat-client.js";

export interface ToolLimits {
  commandTimeoutSec: number;
  outputCapChars: number;
}

export function toolDefinitions(limits: ToolLimits): object[] {
  return [
    {
      type: "function",
      function: {
        name: "bash",
        description:
          `Run one shell command (bash -c) in the task's workspace and get its exit code and output ` +
          `(the last ${limits.outputCapChars} characters). Each call is a fresh shell; it is killed ` +
          `after ${limits.commandTimeoutSec} s.`,
        parameters: {
          type: "object",
          properties: { command: { type: "string", description: "The command line to run." } },
          required: ["command"],
        },
      },
    },
    {
      type: "function",
      function: {
        name: "submit",
        description: "Call this when the task is done. Ends your turn for good.",
        parameters: {
          type: "object",
          properties: { answer: { type: "string", description: "An optional final answer or summary." } },
        },
      },
    },
  ];
}

export interface ToolOutcome {
  /** What the policy reads back as the tool message. */
  result: string;
  event: Extract<TrajectoryEvent, { type: "tool_call" }>;
  submitted: boolean;
}

export async function runTool(
  call: ToolCall,
  sandbox: Sandbox,
  limits: ToolLimits,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const name = call.function?.name ?? "";
  const base = { type: "tool_call" as const, tool_call_id: call.id, ts: new Date().toISOString() };
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(call.function?.arguments || "{}") as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    args = parsed as Record<string, unknown>;
  } catch (err) {
    const result = `error: the arguments of ${name || "the call"} are not a JSON object (${(err as Error).message})`;
    const raw_input = call.function?.arguments ?? null;
    return {
      result,
      submitted: false,
      event: { ...base, title: name, kind: "other", status: "failed", raw_input, raw_output: result },
    };
  }
  if (name === "submit") {
    const answer = typeof args.answer === "string" ? args.answer : null;
    const result = "submitted";
    return {
      result,
      submitted: true,
      event: {
        ...base,
        title: "submit",
        kind: "other",
        status: "completed",
        raw_input: args,
        raw_output: { answer },
      },
    };
  }
  if (name !== "bash" || typeof args.command !== "string" || args.command.trim() === "") {
    const result =
      name === "bash"
        ? 'error: bash needs {"command": "<a shell command>"}'
        : `error: unknown tool ${JSON.stringify(name)}; the tools are bash and submit`;
    return {
      result,
      submitted: false,
      event: { ...base, title: name, kind: "other", status: "failed", raw_input: args, raw_output: result },
    };
  }
  const command = args.command;
  const run = await sandbox.exec(command, {
    user: "agent",
    timeoutSec: limits.commandTimeoutSec,
    signal,
    maxOutputBytes: Math.max(limits.outputCapChars * 4, 64 * 1024),
  });
  const output = capTail(
    run.stdout + (run.stderr ? `${run.stdout ? "\n" : ""}${run.stderr}` : ""),
    limits.outputCapChars,
  );
  const note = run.timedOut
    ? `\n[the command timed out after ${limits.commandTimeoutSec} s and was killed]`
    : "";
  const result = `exit code: ${run.exitCode ?? "none (killed)"}\n${output}${note}`;
  return {
    result,
    submitted: false,
    event: {
      ...base,
      title: command.length > 120 ? `${command.slice(0, 117)}...` : command,
      kind: "execute",
      status: run.exitCode === 0 ? "completed" : "failed",
      raw_input: { command },
      raw_output: { exit_code: run.exitCode, output: output + note, timed_out: run.timedOut },
    },
  };
}

/** The last `cap` characters, saying how much was cut. */
function capTail(text: string, cap: number): string {
  if (text.length <= cap) return text;
  return `[output truncated: the first ${text.length - cap} characters are cut]\n${text.slice(text.length - cap)}`;
}
