// Shared pieces for turning an agent CLI's JSON output into trajectory events (upstream's ACP
// shapes: agent_message, agent_thought, tool_call with raw input and output).
import type { TrajectoryEvent } from "../types.js";

/** What one agent's JSON output says happened. */
export interface ParsedRun {
  events: TrajectoryEvent[];
  nToolCalls: number;
  nSkillInvocations: number;
  /** The agent's own report of a failure (an API error it gave up on, say). */
  error: string | null;
  /** A failure before the agent ran (an ACP handshake that did not complete): agent_setup. */
  setupError?: string;
}

/** Longest string kept per tool output in acp_trajectory.jsonl (the tail is dropped). */
const OUTPUT_CAP = 64 * 1024;

export function capText(value: unknown): unknown {
  if (typeof value !== "string" || value.length <= OUTPUT_CAP) return value;
  return `${value.slice(0, OUTPUT_CAP)}\n[... ${value.length - OUTPUT_CAP} more characters]`;
}

/** ACP's tool kinds, from the tool's name in any of the three vocabularies. */
export function toolKind(name: string): string {
  const n = name.toLowerCase();
  if (["bash", "shell", "exec_command", "command_execution", "local_shell", "write_stdin"].includes(n))
    return "execute";
  if (["write", "edit", "multiedit", "apply_patch", "file_change", "notebookedit", "patch"].includes(n))
    return "edit";
  if (["read", "view_image", "notebookread"].includes(n)) return "read";
  if (["grep", "glob", "ls", "list", "codesearch", "web_search", "websearch"].includes(n)) return "search";
  if (["webfetch", "fetch"].includes(n)) return "fetch";
  if (["todowrite", "todoread", "update_plan", "todo_list"].includes(n)) return "think";
  return "other";
}

/** Non-empty JSON objects, one per line; other lines (warnings, banners) are skipped. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const v = JSON.parse(t);
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // A line cut off by a kill is not an event.
    }
  }
  return out;
}

export function isoOf(ms: unknown): string | undefined {
  return typeof ms === "number" && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function obj(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

type ToolCallEvent = TrajectoryEvent & { type: "tool_call" };

/** Tool calls of agents that report a call's start and its end apart (Gemini CLI, pi): pending until they end. */
export class StartedCalls {
  private readonly byId = new Map<string, ToolCallEvent>();

  /** The call's event, pending; the caller adds it to its events. */
  start(id: string, tool: string, input: unknown, ts?: string): ToolCallEvent {
    const call: ToolCallEvent = {
      type: "tool_call",
      tool_call_id: id,
      title: tool,
      kind: toolKind(tool),
      status: "pending",
      raw_input: input ?? null,
      raw_output: null,
      ...(ts ? { ts } : {}),
    };
    this.byId.set(id, call);
    return call;
  }

  /** Ends a started call (one never started is ignored). */
  finish(id: string, ok: boolean, output: unknown): void {
    const call = this.byId.get(id);
    if (!call) return;
    call.status = ok ? "completed" : "failed";
    call.raw_output = capText(output);
  }
}
