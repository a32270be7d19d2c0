// Claude Code subagents. A subagent (started with the `Agent` tool, `Task` in older Claude Code)
// sends its model calls through the same gateway, so they sit in llm_trajectory.jsonl between the
// parent's. Before rows are built, each successful call of such a rollout is attributed (upstream's
// rules): to a subagent when acp_trajectory.jsonl links its tool calls to the spawn call
// (`parent_tool_call_id`), or when its conversation starts with the spawn call's prompt; to the
// parent when it declares the spawn tool (Claude Code gives it only to the main agent). A tool-less
// call with neither is a helper made inside a tool (WebSearch's own call). A tool-using call with no
// evidence, or with evidence both ways, fails the conversion: an unattributed call never joins the
// parent's rows. A rollout with no spawn call is left as it is.
import path from "node:path";
import { type Conversation, conversationOf } from "../../jobs-dir/conversation/index.js";
import { type Exchange, isSuccessful, requestBody } from "../../jobs-dir/exchange.js";
import { ACP_TRAJECTORY, TRAJECTORY } from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import type { ChatMessage } from "../../schemas/train-rows.js";
import { isRecord, readJsonLines } from "../../util/jsonl.js";

/** The tools that start a Claude Code subagent. */
export const SPAWN_TOOLS: readonly string[] = ["Agent", "Task"];

export interface Spawn {
  /** The spawn tool call's id: the subagent rows' parent_tool_call_id. */
  id: string;
  prompt: string;
  description: string | null;
  type: string | null;
  /** The call whose reply made it; -1 when only a later call's history shows it. */
  madeAt: number;
}

export type CallRole = { role: "parent" } | { role: "subagent"; spawn: Spawn } | { role: "helper" };

export interface CallRoles {
  /** Every successful call, by its line index. */
  byIndex: Map<number, CallRole>;
  spawns: Spawn[];
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function callsOf(conv: Conversation): Array<{ id: string; name: string; arguments: unknown }> {
  const all = [...conv.messages, ...(conv.assistant ? [conv.assistant] : [])];
  return all.flatMap((m) =>
    (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
  );
}

function spawnOf(call: { id: string; arguments: unknown }, madeAt: number): Spawn {
  let args: unknown = call.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      args = {};
    }
  }
  const a = isRecord(args) ? args : {};
  return {
    id: call.id,
    prompt: typeof a.prompt === "string" ? a.prompt.trim() : "",
    description: str(a.description),
    type: str(a.subagent_type),
    madeAt,
  };
}

function textOf(m: ChatMessage | undefined): string {
  if (!m) return "";
  if (typeof m.content === "string") return m.content;
  if (!Array.isArray(m.content)) return "";
  return m.content
    .map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : ""))
    .filter((t) => t !== "")
    .join("\n");
}

/** The conversation starts with the prompt: its first user message is the prompt, or one of its parts. */
function startsWithPrompt(conv: Conversation, prompt: string): boolean {
  if (prompt === "") return false;
  const first = textOf(conv.messages.find((m) => m.role === "user")).trim();
  return first === prompt || `\n${first}\n`.includes(`\n${prompt}\n`);
}

/** acp_trajectory.jsonl: each tool call's spawning call, and the spawn calls' own inputs. */
async function acpLinks(dir: string, display: string) {
  const parents = new Map<string, string>();
  const inputs = new Map<string, unknown>();
  const events =
    (await readJsonLines(path.join(dir, ACP_TRAJECTORY), path.join(display, ACP_TRAJECTORY))) ?? [];
  for (const e of events) {
    if (!isRecord(e)) continue;
    const id = str(e.tool_call_id) ?? str(e.toolCallId);
    if (!id) continue;
    const parent = str(e.parent_tool_call_id) ?? str(e.parentToolCallId);
    if (parent) parents.set(id, parent);
    if (e.raw_input !== undefined) inputs.set(id, e.raw_input);
  }
  return { parents, inputs };
}

/** Whether the call declares Agent or Task, in any dialect (Anthropic `name`, OpenAI `function.name`). */
function offersSpawn(ex: Exchange): boolean {
  const tools = requestBody(ex).tools;
  if (!Array.isArray(tools)) return false;
  return tools.some((t) => {
    if (!isRecord(t)) return false;
    const name = isRecord(t.function) ? t.function.name : t.name;
    return typeof name === "string" && SPAWN_TOOLS.includes(name);
  });
}

/** Any spawn call in the rollout's calls, their replies and the histories they sent. */
function spawnsIn(convs: Array<{ ex: Exchange; conv: Conversation }>): Map<string, Spawn> {
  const spawns = new Map<string, Spawn>();
  for (const { ex, conv } of convs) {
    for (const c of conv.assistant?.tool_calls ?? [])
      if (SPAWN_TOOLS.includes(c.function.name))
        spawns.set(c.id, spawnOf({ id: c.id, arguments: c.function.arguments }, ex.index));
    for (const c of callsOf(conv))
      if (SPAWN_TOOLS.includes(c.name) && !spawns.has(c.id)) spawns.set(c.id, spawnOf(c, -1));
  }
  return spawns;
}

/**
 * The role of every successful call, or null when the rollout started no subagent (nothing to
 * attribute: every call is the agent's, as before). Throws on a call it cannot attribute.
 */
export async function callRolesOf(
  exchanges: readonly Exchange[],
  where: { dir: string; displayDir: string },
): Promise<CallRoles | null> {
  const ok = exchanges.filter(isSuccessful);
  // Only a model offered the spawn tool can start a subagent: most rollouts stop here, unread.
  if (!ok.some(offersSpawn)) return null;
  const convs = ok.map((ex) => ({ ex, conv: conversationOf(ex) }));
  const spawns = spawnsIn(convs);
  if (spawns.size === 0) return null;
  const acp = await acpLinks(where.dir, where.displayDir);
  const spawnById = (id: string): Spawn => {
    let s = spawns.get(id);
    if (!s) {
      // Linked by acp_trajectory.jsonl to a call the gateway did not record: its input is in the events.
      s = spawnOf({ id, arguments: acp.inputs.get(id) ?? {} }, -1);
      spawns.set(id, s);
    }
    return s;
  };
  const byIndex = new Map<number, CallRole>();
  const trajectory = path.join(where.displayDir, TRAJECTORY);
  for (const { ex, conv } of convs) {
    const line = `${trajectory} line ${ex.index + 1}`;
    const own = callsOf(conv);
    const ownIds = new Set(own.map((c) => c.id));
    const declaresSpawn = conv.tools.some((t) => SPAWN_TOOLS.includes(t.function.name));
    const byAcp = new Set(own.map((c) => acp.parents.get(c.id)).filter((p): p is string => p !== undefined));
    // A subagent's calls come after the call that started it, and never hold that call themselves.
    const byPrompt = [...spawns.values()].filter(
      (s) => s.madeAt < ex.index && !ownIds.has(s.id) && startsWithPrompt(conv, s.prompt),
    );
    const fail = (why: string) =>
      new Error(
        `${line}: cannot tell whether this model call is the parent's or a subagent's: ${why}; nothing was written. ` +
          `Leave the rollout out with ${opt("canonicalSelection")}, or fix its trajectory files.`,
      );
    if (byAcp.size > 1)
      throw fail(
        `acp_trajectory.jsonl links its tool calls to several spawn calls (${[...byAcp].join(", ")})`,
      );
    const linked = byAcp.size === 1 ? ([...byAcp][0] as string) : null;
    if (linked && byPrompt.length > 0 && !byPrompt.some((s) => s.id === linked)) {
      throw fail(
        `acp_trajectory.jsonl links it to ${linked} but it starts with the prompt of ${byPrompt.map((s) => s.id).join(", ")}`,
      );
    }
    if (!linked && byPrompt.length > 1)
      throw fail(
        `it starts with the prompt of several spawn calls (${byPrompt.map((s) => s.id).join(", ")})`,
      );
    const subagent = linked ?? byPrompt[0]?.id ?? null;
    if (subagent && declaresSpawn) {
      throw fail(
        `it declares the ${SPAWN_TOOLS.join("/")} tool (the parent's) yet belongs to the subagent of ${subagent}`,
      );
    }
    if (subagent) byIndex.set(ex.index, { role: "subagent", spawn: spawnById(subagent) });
    else if (declaresSpawn) byIndex.set(ex.index, { role: "parent" });
    else if (conv.tools.length === 0) byIndex.set(ex.index, { role: "helper" });
    else {
      throw fail(
        `it declares tools but not ${SPAWN_TOOLS.join("/")}, no spawn call's prompt starts it and acp_trajectory.jsonl links none of its tool calls`,
      );
    }
  }
  return { byIndex, spawns: [...spawns.values()] };
}

/**
 * The calls that become rows: without subagents, every primary call (the last one in rollout
 * mode); with them, the parent's, and with --subagent-rows each subagent's too, the same mode
 * applied to each conversation. Helpers: calls left out as helpers (their count).
 */
export function rowCandidates(
  ok: readonly Exchange[],
  roles: CallRoles | null,
  opts: { rowMode: "rollout" | "exchange"; subagentRows: boolean; primary: (ex: Exchange) => boolean },
): { calls: Exchange[]; helpers: number } {
  const primary = ok.filter((ex) => opts.primary(ex) && roles?.byIndex.get(ex.index)?.role !== "helper");
  const helpers = ok.length - primary.length;
  const threads = new Map<string, Exchange[]>();
  for (const ex of primary) {
    const role = roles?.byIndex.get(ex.index);
    const key = role?.role === "subagent" ? role.spawn.id : "";
    if (key !== "" && !opts.subagentRows) continue;
    const list = threads.get(key);
    if (list) list.push(ex);
    else threads.set(key, [ex]);
  }
  const calls = [...threads.values()].flatMap((list) =>
    opts.rowMode === "rollout" ? [lastTurn(list)] : list,
  );
  return { calls: calls.sort((a, b) => a.index - b.index), helpers };
}

/**
 * A thread's last turn of the agent: its last call that offers the agent's tools, where any call
 * does. A side call made after the work (Kilo Code titles its session last, tool-less) is not the
 * rollout's conversation.
 */
function lastTurn(list: Exchange[]): Exchange {
  const offersTools = (ex: Exchange) => {
    const tools = requestBody(ex)?.tools;
    return Array.isArray(tools) && tools.length > 0;
  };
  return list.findLast(offersTools) ?? (list[list.length - 1] as Exchange);
}

/** A row's --subagent-rows fields: agent_role, and for a subagent the call that started it. */
export function roleFields(ex: Exchange, roles: CallRoles | null, subagentRows: boolean) {
  if (!subagentRows) return {};
  const role = roles?.byIndex.get(ex.index);
  if (role?.role !== "subagent") return { agent_role: "parent" as const };
  return {
    agent_role: "subagent" as const,
    parent_tool_call_id: role.spawn.id,
    subagent_type: role.spawn.type,
    subagent_description: role.spawn.description,
  };
}

/** Counts for the manifest: subagents started, and the calls they made. */
export function subagentCounts(roles: CallRoles | null) {
  if (!roles) return { rollouts: 0, spawns: 0, exchanges: 0 };
  let exchanges = 0;
  for (const r of roles.byIndex.values()) if (r.role === "subagent") exchanges++;
  return { rollouts: 1, spawns: roles.spawns.length, exchanges };
}
