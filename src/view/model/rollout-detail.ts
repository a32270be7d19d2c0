// One rollout read whole, when its page is asked for: the instruction, the trajectory in order, each
// model call (latency, tokens, captured logprobs), the verifier's output, rewards, timing, config and
// the raw files. Read from the folder on demand, never kept: the index holds only the Rollout records.
import { promises as fs } from "node:fs";
import path from "node:path";
import { conversationOf } from "../../jobs-dir/conversation/index.js";
import {
  ACP_TRAJECTORY,
  CONFIG,
  callPurposeOf,
  type Exchange,
  PROMPTS,
  RESULT,
  type Rollout,
  readObject,
  responseBody,
  statusOf,
  TIMING,
  TRAJECTORY,
  toExchange,
  tokenCaptureOf,
} from "../../jobs-dir/index.js";
import { isRecord, readJsonLines } from "../../util/jsonl.js";

type Obj = Record<string, unknown>;

/** One step of the trajectory, in the order it happened. */
export type Step =
  | { kind: "message"; role: string; text: string; reasoning: string | null }
  | { kind: "thought"; text: string }
  | {
      kind: "tool_call";
      name: string;
      id: string | null;
      args: string;
      output: string | null;
      status: string | null;
    };

export interface Token {
  text: string;
  id: number | null;
  /** null: masked or not captured (shown as absent, never as 0). */
  logprob: number | null;
}

export interface ModelCall {
  index: number;
  purpose: string;
  status: number | null;
  latencyMs: number | null;
  startedAt: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  policyVersion: string | null;
  /** The sampled tokens when token capture recorded them. */
  tokens: Token[] | null;
  promptTokens: number | null;
  error: string | null;
}

export interface RawFile {
  path: string;
  size: number;
}

export interface RolloutDetail {
  rollout: Rollout;
  instruction: string | null;
  trajectory: Step[];
  /** Where the trajectory came from: the agent's events, or the last model call's conversation. */
  trajectorySource: "agent_events" | "model_calls" | "none";
  calls: ModelCall[];
  callsProblem: string | null;
  verifierOutput: string | null;
  verifierFiles: RawFile[];
  rewards: Obj | null;
  timing: Obj | null;
  config: Obj | null;
  result: Obj | null;
  files: RawFile[];
}

const MAX_TEXT = 256 * 1024;
const MAX_FILES = 500;

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

function textOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "";
  if (Array.isArray(v))
    return v
      .map((p) =>
        typeof p === "string"
          ? p
          : isRecord(p) && typeof p.text === "string"
            ? p.text
            : isRecord(p) && typeof p.output === "string"
              ? p.output
              : JSON.stringify(p),
      )
      .join("\n");
  return JSON.stringify(v, null, 2);
}

async function readCapped(file: string): Promise<string | null> {
  const h = await fs.open(file, "r").catch(() => null);
  if (!h) return null;
  try {
    const buf = Buffer.alloc(MAX_TEXT);
    const { bytesRead } = await h.read(buf, 0, MAX_TEXT, 0);
    const size = (await h.stat()).size;
    const text = buf.subarray(0, bytesRead).toString("utf8");
    return size > MAX_TEXT ? `${text}\n[... ${size - MAX_TEXT} more bytes: see the raw file]` : text;
  } finally {
    await h.close();
  }
}

async function listFiles(dir: string, rel = "", out: RawFile[] = []): Promise<RawFile[]> {
  const list = await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
  for (const e of list.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (out.length >= MAX_FILES) break;
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) await listFiles(dir, p, out);
    else if (e.isFile()) {
      const st = await fs.stat(path.join(dir, p)).catch(() => null);
      out.push({ path: p, size: st?.size ?? 0 });
    }
  }
  return out;
}

/** The agent's events (acp_trajectory.jsonl) as steps; tool calls with their input and output. */
function stepsOfEvents(events: unknown[]): Step[] {
  const steps: Step[] = [];
  for (const e of events) {
    if (!isRecord(e)) continue;
    if (e.type === "user_message")
      steps.push({ kind: "message", role: "user", text: textOf(e.text), reasoning: null });
    else if (e.type === "agent_message")
      steps.push({ kind: "message", role: "assistant", text: textOf(e.text), reasoning: null });
    else if (e.type === "agent_thought") steps.push({ kind: "thought", text: textOf(e.text) });
    else if (e.type === "tool_call")
      steps.push({
        kind: "tool_call",
        name: str(e.title) ?? str(e.kind) ?? "tool",
        id: str(e.tool_call_id),
        args: textOf(e.raw_input),
        output: e.raw_output === undefined ? null : textOf(e.raw_output),
        status: str(e.status),
      });
    else if (e.type === "oracle")
      steps.push({
        kind: "tool_call",
        name: "oracle",
        id: null,
        args: textOf(e.command),
        output: textOf(e.stdout),
        status: e.return_code === 0 ? "completed" : `exit ${String(e.return_code)}`,
      });
  }
  return steps;
}

function reasoningOf(m: Obj): string | null {
  const r = m.reasoning_content ?? m.reasoning;
  if (typeof r === "string" && r !== "") return r;
  if (Array.isArray(m.content)) {
    const t = m.content
      .filter((p) => isRecord(p) && p.type === "thinking" && typeof p.thinking === "string")
      .map((p) => (p as Obj).thinking as string);
    if (t.length > 0) return t.join("\n");
  }
  return null;
}

/** The last call's conversation: what the agent sent plus the reply, tool outputs joined to their calls. */
function stepsOfConversation(ex: Exchange): Step[] {
  const conv = conversationOf(ex);
  const messages = [...conv.messages, ...(conv.assistant ? [conv.assistant] : [])];
  const steps: Step[] = [];
  const byId = new Map<string, Extract<Step, { kind: "tool_call" }>>();
  for (const m of messages) {
    const mo = m as unknown as Obj;
    if (m.role === "tool") {
      const call = m.tool_call_id ? byId.get(m.tool_call_id) : undefined;
      if (call && call.output === null) call.output = textOf(m.content);
      else
        steps.push({
          kind: "tool_call",
          name: m.name ?? "tool",
          id: m.tool_call_id ?? null,
          args: "",
          output: textOf(m.content),
          status: null,
        });
      continue;
    }
    const text = textOf(m.content);
    const reasoning = reasoningOf(mo);
    if (text !== "" || reasoning) steps.push({ kind: "message", role: m.role, text, reasoning });
    for (const tc of m.tool_calls ?? []) {
      const step: Extract<Step, { kind: "tool_call" }> = {
        kind: "tool_call",
        name: tc.function.name,
        id: tc.id,
        args: textOf(tc.function.arguments),
        output: null,
        status: null,
      };
      byId.set(tc.id, step);
      steps.push(step);
    }
  }
  return steps;
}

function tokensOf(ex: Exchange): { tokens: Token[] | null; prompt: number | null } {
  const tc = tokenCaptureOf(ex);
  if (!tc) return { tokens: null, prompt: null };
  const prompt = Array.isArray(tc.prompt_token_ids) ? tc.prompt_token_ids.length : null;
  const c = Array.isArray(tc.completions) && isRecord(tc.completions[0]) ? tc.completions[0] : null;
  if (!c) return { tokens: null, prompt };
  const ids = Array.isArray(c.token_ids) ? c.token_ids : [];
  const texts = Array.isArray(c.tokens) ? c.tokens : [];
  const lps = Array.isArray(c.logprobs) ? c.logprobs : [];
  const n = Math.max(ids.length, texts.length);
  const tokens: Token[] = [];
  for (let i = 0; i < n; i++)
    tokens.push({
      text: typeof texts[i] === "string" ? (texts[i] as string) : String(ids[i] ?? ""),
      id: num(ids[i]),
      logprob: num(lps[i]),
    });
  return { tokens, prompt };
}

function callOf(raw: unknown, i: number, display: string, agent: string | null): ModelCall {
  const ex = toExchange(raw, i, display);
  const line = raw as Obj;
  const body = responseBody(ex);
  const usage = isRecord(body.usage) ? body.usage : {};
  const start = str(ex.request.timestamp);
  const end = str(ex.response.timestamp);
  const span = start && end ? Date.parse(end) - Date.parse(start) : Number.NaN;
  const { tokens, prompt } = tokensOf(ex);
  const err = isRecord(body.error) ? str(body.error.message) : null;
  const pv = ex.metadata.policy_version;
  return {
    index: i,
    purpose: callPurposeOf(ex, agent),
    status: statusOf(ex),
    latencyMs: num(line.duration_ms) ?? (Number.isFinite(span) ? span : null),
    startedAt: start,
    inputTokens: num(usage.prompt_tokens) ?? num(usage.input_tokens) ?? prompt,
    outputTokens: num(usage.completion_tokens) ?? num(usage.output_tokens) ?? tokens?.length ?? null,
    policyVersion: typeof pv === "string" || typeof pv === "number" ? String(pv) : null,
    tokens,
    promptTokens: prompt,
    error: err,
  };
}

export async function readRolloutDetail(rollout: Rollout): Promise<RolloutDetail> {
  const dir = rollout.dir;
  const display = `${rollout.relPath}/${TRAJECTORY}`;
  const [result, config, timingFile, prompts, files, verifierOutput] = await Promise.all([
    readObject(path.join(dir, RESULT)),
    readObject(path.join(dir, CONFIG)),
    readObject(path.join(dir, TIMING)),
    fs
      .readFile(path.join(dir, PROMPTS), "utf8")
      .then((t) => JSON.parse(t) as unknown)
      .catch(() => null),
    listFiles(dir),
    readCapped(path.join(dir, "verifier", "test-stdout.txt")),
  ]);
  let lines: unknown[] = [];
  let callsProblem: string | null = null;
  try {
    lines = (await readJsonLines(path.join(dir, TRAJECTORY), display)) ?? [];
  } catch (err) {
    callsProblem = (err as Error).message;
  }
  const calls: ModelCall[] = [];
  for (const [i, l] of lines.entries()) {
    try {
      calls.push(callOf(l, i, display, rollout.agent));
    } catch (err) {
      callsProblem = (err as Error).message;
    }
  }
  let events: unknown[] = [];
  try {
    events =
      (await readJsonLines(path.join(dir, ACP_TRAJECTORY), `${rollout.relPath}/${ACP_TRAJECTORY}`)) ?? [];
  } catch {
    events = [];
  }
  let trajectory = stepsOfEvents(events);
  let trajectorySource: RolloutDetail["trajectorySource"] = "agent_events";
  const acted = trajectory.some((s) => s.kind !== "message" || s.role !== "user");
  // Agents whose events say little (only the prompt): the last answered call holds the whole conversation.
  if (!acted) {
    const last = [...lines.keys()]
      .reverse()
      .map((i) => {
        try {
          return toExchange(lines[i], i, display);
        } catch {
          return null;
        }
      })
      .find((ex): ex is Exchange => ex !== null && statusOf(ex) === 200);
    if (last) {
      trajectory = stepsOfConversation(last);
      trajectorySource = "model_calls";
    } else if (trajectory.length === 0) trajectorySource = "none";
  }
  const instruction = Array.isArray(prompts)
    ? prompts.map(textOf).join("\n\n")
    : typeof prompts === "string"
      ? prompts
      : ((trajectory.find((s) => s.kind === "message" && s.role === "user") as { text?: string } | undefined)
          ?.text ?? null);
  const timing = timingFile ?? (isRecord(result?.timing) ? result.timing : null);
  return {
    rollout,
    instruction,
    trajectory,
    trajectorySource,
    calls,
    callsProblem,
    verifierOutput,
    verifierFiles: files.filter((f) => f.path.startsWith("verifier/")),
    rewards: isRecord(result?.rewards) ? result.rewards : null,
    timing,
    config,
    result,
    files,
  };
}
