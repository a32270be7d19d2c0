// Filling in what a result.json written by upstream BenchFlow leaves out. Upstream's own writers and
// tests write results as small as {"task_name", "rewards", "n_tool_calls"}; its readers then take the
// task from the folder name, the reward from `rewards.reward` or a legacy top-level `reward`, and
// leave the rest null. The train side reads such folders this way and says, per rollout, what it
// filled and from where; the run side (loadJob, resume) reads only results whole (readResult).
import { z } from "zod";
import { Rewards, RolloutResult } from "../schemas/result.js";
import { taskOfRolloutName } from "./layout.js";

/** Field -> where its value came from ("folder name", "config.json", ...); null: nothing to fill it from. */
export type Inferred = Record<string, string | null>;

export interface InferredResult {
  result: RolloutResult;
  inferred: Inferred;
  /** Fields of the wrong type that were left out, and why (the rest of the result still counts). */
  ignored: Record<string, string>;
}

/** What a rollout folder offers besides result.json. */
export interface InferenceSources {
  /** The rollout folder's name. */
  name: string;
  config: Record<string, unknown> | null;
  /** The job's plan (evaluation.json), when there is one. */
  plan: { agent?: unknown; model?: unknown } | null;
}

/**
 * JSON as Python's json.dumps writes it, which allows NaN, Infinity and -Infinity (upstream writes
 * result.json that way): those tokens, outside strings, read as null. undefined: not JSON even so.
 */
export function parsePythonJson(text: string): unknown {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    const token = ["-Infinity", "Infinity", "NaN"].find((t) => text.startsWith(t, i));
    if (token) {
      out += "null";
      i += token.length - 1;
    } else out += c;
  }
  try {
    return JSON.parse(out);
  } catch {
    return undefined;
  }
}

/** RolloutResult, except that `agent` may be unknown: only an inferred result has a null agent. */
const InferredRolloutResult = RolloutResult.extend({ agent: z.string().nullable() });
/** The fields every reader keys on: filled above, never left out. */
const KEY_FIELDS = new Set(["task_name", "rollout_name", "agent", "model", "rewards"]);

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const finite = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The first of (value, where) whose value is a string. */
function firstText(...candidates: Array<[unknown, string]>): [string, string] | null {
  for (const [v, from] of candidates) {
    const t = text(v);
    if (t !== null) return [t, from];
  }
  return null;
}

/** Upstream's reward: `rewards.reward`, else a top-level `reward`; anything else is unscored. */
function fillRewards(raw: Record<string, unknown>, inferred: Inferred): void {
  const rewards = raw.rewards;
  if (Rewards.safeParse(rewards).success && finite((rewards as { reward: unknown }).reward) !== null) return;
  const legacy = finite(raw.reward);
  const others = typeof rewards === "object" && rewards !== null && !Array.isArray(rewards) ? rewards : {};
  if (legacy !== null) {
    raw.rewards = { ...others, reward: legacy };
    inferred.rewards = "reward";
  } else if (rewards !== null) {
    // Missing, or a map without a numeric `reward`: unscored, never 0.
    raw.rewards = null;
    inferred.rewards = null;
  }
}

/**
 * The result of a rollout folder from a result.json object that may lack the fields we write. A
 * complete result comes back as it is, with nothing inferred.
 */
export function inferResult(
  parsed: Record<string, unknown>,
  from: InferenceSources,
): InferredResult | { problem: string } {
  const raw: Record<string, unknown> = { ...parsed };
  const inferred: Inferred = {};
  if (text(raw.task_name) === null) {
    raw.task_name = taskOfRolloutName(from.name);
    inferred.task_name = "folder name";
  }
  if (text(raw.rollout_name) === null) {
    raw.rollout_name = from.name;
    inferred.rollout_name = "folder name";
  }
  for (const field of ["agent", "model"] as const) {
    // An explicit null model is a value (no model), not a gap.
    if (text(raw[field]) !== null || (field === "model" && raw.model === null)) continue;
    const found = firstText([from.config?.[field], "config.json"], [from.plan?.[field], "evaluation.json"]);
    raw[field] = found?.[0] ?? null;
    inferred[field] = found?.[1] ?? null;
  }
  if (raw.task_digest === undefined && text(from.config?.task_digest) !== null) {
    raw.task_digest = from.config?.task_digest;
    inferred.task_digest = "config.json";
  }
  fillRewards(raw, inferred);
  const ignored: Record<string, string> = {};
  for (;;) {
    const res = InferredRolloutResult.safeParse(raw);
    if (res.success) return { result: res.data as RolloutResult, inferred, ignored };
    const issue = res.error.issues[0];
    const field = issue?.path[0];
    if (typeof field !== "string" || KEY_FIELDS.has(field) || !(field in raw)) {
      return { problem: `field ${issue?.path.join(".") || "(top level)"}: ${issue?.message ?? "invalid"}` };
    }
    ignored[field] = `${issue?.path.join(".")}: ${issue?.message ?? "invalid"}`;
    delete raw[field];
  }
}
