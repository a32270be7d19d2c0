// The scripted endpoint's scripts ("policy scripts" to the user): which replies it gives, per
// conversation and turn.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { UserInputError } from "../errors.js";
import { opt, phrase } from "../options.js";
import { contentText } from "./chat-template.js";

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
}
export interface ScriptedTextReply {
  content?: string;
  reasoning?: string;
  tool_calls?: ScriptedToolCall[];
  finish_reason?: string;
}
/**
 * A scripted endpoint failure. With `times: N` it is transient: only the first N requests that reach
 * its turn get it, and it does not count as a turn of its own (see chooseReply).
 */
export type ScriptedFailure = (
  | { fail: { status: number; body?: string } }
  | { hang: true }
  | { malformed: true }
  | { cut: true }
) & { times?: number };
export type ScriptedReply = ScriptedTextReply | ScriptedFailure;
/**
 * When a conversation applies, besides `match`: `repeat` is the rollout's repeat (1-based index of
 * the `--trials` repeat job, which the gateway forwards as x-benchflow-repeat; 1 without it), so the
 * N rollouts of a group can get different replies, the same ones on every run. `seed` is the
 * request's own `seed` (what `bench run --seed` makes the gateway send: base + repeat - 1), as a real
 * server samples by it; a request without one matches no `seed` condition. Both given: both hold.
 */
export interface ScriptedWhen {
  repeat?: number | number[];
  seed?: number | number[];
}
export interface ScriptedConversation {
  match?: string;
  when?: ScriptedWhen;
  replies: ScriptedReply[];
}
export interface EndpointScript {
  conversations: ScriptedConversation[];
}

/** What the request says about its rollout (from the gateway's headers). */
export interface RolloutContext {
  /** The repeat, 1-based; 1 when the request does not say. */
  repeat: number;
  /** The request body's `seed`, when it has a whole number there. */
  seed?: number;
}

export interface ChosenReply {
  reply: ScriptedReply;
  /** The reply that answers this turn once its transient failures are used up (`reply` itself when it has none). */
  answer: ScriptedReply;
  /** Number of assistant messages already in the request. */
  turn: number;
  /** Short hash that keeps tool-call ids distinct across conversations. */
  conversationKey: string;
}

/** How many earlier requests reached this conversation's turn; the caller counts (the scripted server does). */
export type AttemptCounter = (key: string) => number;

export const FAILURE_MODES = ["fail", "hang", "malformed", "cut"] as const;
const PAST_THE_END: ScriptedReply = { content: "done" };

export function isFailure(reply: ScriptedReply): reply is ScriptedFailure {
  return FAILURE_MODES.some((mode) => mode in reply);
}

/** One turn of a conversation: its transient failures, in order, then the reply that answers it. */
interface Turn {
  transient: { reply: ScriptedReply; times: number }[];
  answer: ScriptedReply;
}

/**
 * The replies list read as turns: a reply with `times` belongs to the turn of the next reply without
 * `times`, which answers that turn; transient failures at the end of the list precede "done".
 */
export function scriptTurns(replies: readonly ScriptedReply[]): Turn[] {
  const turns: Turn[] = [];
  let transient: Turn["transient"] = [];
  for (const reply of replies) {
    const times = (reply as { times?: number }).times;
    if (times !== undefined) transient.push({ reply, times });
    else {
      turns.push({ transient, answer: reply });
      transient = [];
    }
  }
  if (transient.length > 0) turns.push({ transient, answer: PAST_THE_END });
  return turns;
}

/**
 * Picks the reply for a request's messages; undefined when no conversation matches and none is default.
 * `attempts` (given by the server) says how many earlier requests reached the same conversation and
 * turn, which decides whether a transient failure still applies; without it, every request is the first.
 */
export function chooseReply(
  script: EndpointScript,
  messages: readonly unknown[],
  attempts?: AttemptCounter,
  rollout: RolloutContext = { repeat: 1 },
): ChosenReply | undefined {
  const text = openingText(messages);
  const applies = (c: ScriptedConversation) => whenHolds(c.when, rollout);
  let index = script.conversations.findIndex(
    (c) => c.match !== undefined && text.includes(c.match) && applies(c),
  );
  if (index === -1) index = script.conversations.findIndex((c) => c.match === undefined && applies(c));
  const conversation = script.conversations[index];
  if (!conversation) return undefined;
  const turn = messages.filter((m) => (m as { role?: unknown } | null)?.role === "assistant").length;
  const conversationKey = createHash("sha256").update(`${index}\0${text}`).digest("hex").slice(0, 8);
  const scripted = scriptTurns(conversation.replies)[turn];
  if (!scripted) return { reply: PAST_THE_END, answer: PAST_THE_END, turn, conversationKey };
  let seen = scripted.transient.length > 0 && attempts ? attempts(`${conversationKey}:${turn}`) : 0;
  for (const { reply, times } of scripted.transient) {
    if (seen < times) return { reply, answer: scripted.answer, turn, conversationKey };
    seen -= times;
  }
  return { reply: scripted.answer, answer: scripted.answer, turn, conversationKey };
}

function whenHolds(when: ScriptedWhen | undefined, rollout: RolloutContext): boolean {
  const listed = (v: number | number[]) => (typeof v === "number" ? [v] : v);
  if (when?.repeat !== undefined && !listed(when.repeat).includes(rollout.repeat)) return false;
  if (when?.seed !== undefined && (rollout.seed === undefined || !listed(when.seed).includes(rollout.seed)))
    return false;
  return true;
}

/** A request body's `seed` when it is a whole number (what a sampler would take), else none. */
export function seedOf(body: unknown): number | undefined {
  const seed = (body as { seed?: unknown } | null)?.seed;
  return typeof seed === "number" && Number.isSafeInteger(seed) ? seed : undefined;
}

/**
 * The repeat a request names in x-benchflow-repeat (set by the gateway): 1 when absent or not a
 * whole number >= 1, as for a single run.
 */
export function repeatOf(header: string | string[] | undefined): number {
  const value = Number(Array.isArray(header) ? header[0] : header);
  return Number.isInteger(value) && value >= 1 ? value : 1;
}

/**
 * The text a conversation is matched on: every user message before the first assistant message (the
 * opening prompt), joined by newlines. Most agents open with one user message; Codex sends its
 * environment context first and the task after it.
 */
export function openingText(messages: readonly unknown[]): string {
  const texts: string[] = [];
  for (const m of messages) {
    const message = m as { role?: unknown; content?: unknown } | null;
    if (message?.role === "assistant") break;
    if (message?.role === "user") texts.push(contentText(message.content));
  }
  return texts.join("\n");
}

export async function loadEndpointScript(file: string): Promise<EndpointScript> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new UserInputError(`${file}: cannot read the policy script (${(err as Error).message})`);
  }
  let data: unknown;
  try {
    data = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    const kind = /\.ya?ml$/i.test(file) ? "YAML" : "JSON (name the file .yaml for YAML)";
    throw new UserInputError(`${file}: not valid ${kind}: ${(err as Error).message}`);
  }
  return validateEndpointScript(data, file);
}

/** Checks a parsed script; errors name the file, the field and the fix. */
export function validateEndpointScript(data: unknown, file = "policy script"): EndpointScript {
  const fail: Fail = (field, problem) => {
    throw new UserInputError(`${file}: ${field}: ${problem}`);
  };
  if (!isRecord(data) || !Array.isArray(data.conversations)) {
    fail("conversations", 'missing; expected {"conversations": [{"match"?: "...", "replies": [...]}]}');
  }
  const conversations = (data as { conversations: unknown[] }).conversations;
  for (const [c, conversation] of conversations.entries()) {
    const at = `conversations[${c}]`;
    if (!isRecord(conversation)) fail(at, "expected an object with replies");
    if (conversation.match !== undefined && typeof conversation.match !== "string") {
      fail(
        `${at}.match`,
        "expected a string (a substring of the user messages that open the conversation), or leave it out",
      );
    }
    if (conversation.when !== undefined) checkWhen(conversation.when, `${at}.when`, fail);
    for (const key of Object.keys(conversation)) {
      if (!["match", "when", "replies"].includes(key)) {
        fail(`${at}.${key}`, "unknown field; a conversation has match, when and replies");
      }
    }
    if (!Array.isArray(conversation.replies)) fail(`${at}.replies`, "expected a list of replies");
    for (const [r, reply] of (conversation.replies as unknown[]).entries()) {
      checkReply(reply, `${at}.replies[${r}]`, fail);
    }
  }
  return data as unknown as EndpointScript;
}

type Fail = (field: string, problem: string) => never;

/** What a bad condition should be; made when it fails, so it names the options as the caller does. */
function fixOf(key: "repeat" | "seed"): string {
  if (key === "repeat")
    return `expected a repeat number >= 1 or a list of them, e.g. {"repeat": 2} or {"repeat": [1, 3]} (the Nth of ${opt("trials")} N)`;
  return `expected a seed (a whole number >= 0) or a list of them, e.g. {"seed": 7} or {"seed": [7, 9]} (${phrase("policy.seed of a run", opt("policy.seed"))})`;
}

function checkWhen(when: unknown, at: string, fail: Fail): void {
  if (!isRecord(when)) fail(at, 'expected an object such as {"repeat": 2} or {"seed": 7}');
  const keys = Object.keys(when);
  for (const key of keys) {
    if (key !== "repeat" && key !== "seed") fail(`${at}.${key}`, 'unknown condition; use "repeat" or "seed"');
  }
  if (keys.length === 0) fail(at, 'expected a condition such as {"repeat": 2} or {"seed": 7}');
  for (const key of ["repeat", "seed"] as const) {
    const value = when[key];
    if (value === undefined) continue;
    const least = key === "repeat" ? 1 : 0;
    const whole = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= least;
    if (Array.isArray(value) ? value.length === 0 || !value.every(whole) : !whole(value))
      fail(`${at}.${key}`, fixOf(key));
  }
}

function checkReply(reply: unknown, at: string, fail: Fail): void {
  if (!isRecord(reply)) fail(at, 'expected an object such as {"content": "..."}');
  const modes = FAILURE_MODES.filter((key) => key in reply);
  if (modes.length === 0) {
    if ("times" in reply) {
      fail(
        `${at}.times`,
        'only a failure reply (fail, hang, malformed or cut) takes "times", e.g. {"fail": {"status": 500}, "times": 2} before the reply that answers the turn',
      );
    }
    checkTextReply(reply, at, fail);
    return;
  }
  const extra = Object.keys(reply).filter((key) => key !== modes[0] && key !== "times");
  if (modes.length > 1 || extra.length > 0) {
    fail(at, `"${modes[0]}" must be the only field of its reply, besides "times"`);
  }
  for (const flag of ["hang", "malformed", "cut"]) {
    if (flag in reply && reply[flag] !== true) fail(`${at}.${flag}`, "expected true");
  }
  if ("fail" in reply) checkFailure(reply.fail, `${at}.fail`, fail);
  const times = reply.times;
  if (times !== undefined && (typeof times !== "number" || !Number.isInteger(times) || times < 1)) {
    fail(
      `${at}.times`,
      "expected a whole number >= 1: the first N requests reaching this turn get this failure, later ones the next reply; leave it out to fail every time",
    );
  }
}

function checkFailure(failure: unknown, at: string, fail: Fail): void {
  const status = isRecord(failure) ? failure.status : undefined;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    fail(`${at}.status`, 'expected an HTTP status between 100 and 599, e.g. {"status": 503}');
  }
  if (isRecord(failure) && failure.body !== undefined && typeof failure.body !== "string") {
    fail(`${at}.body`, "expected a string (sent verbatim)");
  }
}

function checkTextReply(reply: Record<string, unknown>, at: string, fail: Fail): void {
  const known = new Set(["content", "reasoning", "tool_calls", "finish_reason"]);
  for (const key of Object.keys(reply)) {
    if (!known.has(key)) {
      fail(
        `${at}.${key}`,
        "unknown field; use content, reasoning, tool_calls, finish_reason, fail, hang, malformed or cut (with times)",
      );
    }
  }
  for (const key of ["content", "reasoning", "finish_reason"]) {
    if (reply[key] !== undefined && typeof reply[key] !== "string") fail(`${at}.${key}`, "expected a string");
  }
  if (reply.tool_calls === undefined) return;
  if (!Array.isArray(reply.tool_calls)) fail(`${at}.tool_calls`, "expected a list of {name, arguments}");
  for (const [i, call] of (reply.tool_calls as unknown[]).entries()) {
    const callAt = `${at}.tool_calls[${i}]`;
    if (!isRecord(call) || typeof call.name !== "string" || call.name === "") {
      fail(`${callAt}.name`, 'expected the tool\'s name, e.g. "bash"');
    }
    const args = call.arguments;
    if (args !== undefined && typeof args !== "string" && !isRecord(args)) {
      fail(`${callAt}.arguments`, "expected an object (sent as JSON) or a string (sent verbatim)");
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
