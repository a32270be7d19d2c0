// The two files that decide a rollout folder's state: result.json (present, missing, or cut short)
// and replaced.json (a retry or a resume replaced this attempt). Read leniently where a reader must
// still find its facts, strictly where a half-written result must not pass for a whole one.
import { promises as fs } from "node:fs";
import path from "node:path";
import { ReplacedMarker, RolloutResult } from "../schemas/result.js";
import { parsePythonJson } from "./infer.js";
import { REPLACED, RESULT } from "./layout.js";

/** present: result.json parsed; missing: none yet (running, or the run died); truncated: cut short or not a result. */
export type ResultState = "present" | "missing" | "truncated";

/** Why an attempt is not final: a replaced.json beside it, or the attempt rule (attempts.ts). */
export interface Replaced {
  /** The rollout folder name of the attempt that replaced this one; null when nothing says. */
  replacedBy: string | null;
  reason: string;
  at: string | null;
  /** A replaced.json says so (false: the attempt rule decided, from the job's other attempts). */
  marker: boolean;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/** A JSON object file, or null when it is absent or not an object. */
export async function readObject(file: string): Promise<Record<string, unknown> | null> {
  const text = await readText(file);
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text);
    return isRecord(v) ? v : null;
  } catch {
    return null;
  }
}

export interface ResultRead {
  state: ResultState;
  result: RolloutResult | null;
  problem: string | null;
  /** The parsed file when it is a JSON object (what inference starts from). */
  raw: Record<string, unknown> | null;
}

/** result.json; with `python`, NaN and Infinity (upstream's json.dumps) give a raw object to infer from. */
export async function readResultFile(dir: string, python = false): Promise<ResultRead> {
  const text = await readText(path.join(dir, RESULT));
  if (text === undefined) return { state: "missing", result: null, problem: null, raw: null };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const problem = `not valid JSON (${(err as Error).message})`;
    const parsed = python ? parsePythonJson(text) : undefined;
    return { state: "truncated", result: null, problem, raw: isRecord(parsed) ? parsed : null };
  }
  const obj = isRecord(raw) ? raw : null;
  const parsed = RolloutResult.safeParse(raw);
  if (parsed.success) return { state: "present", result: parsed.data, problem: null, raw: obj };
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".") || "(top level)";
  return {
    state: "truncated",
    result: null,
    problem: `field ${field}: ${issue?.message ?? "invalid"}`,
    raw: obj,
  };
}

/** result.json read whole: a result that lacks a field we write reads as cut short. */
export async function readResult(
  dir: string,
): Promise<{ state: ResultState; result: RolloutResult | null; problem: string | null }> {
  const { state, result, problem } = await readResultFile(dir);
  return { state, result, problem };
}

/** A marker that is there but does not parse still means replaced: only a retry or resume writes one. */
export async function readReplaced(dir: string): Promise<Replaced | null> {
  const text = await readText(path.join(dir, REPLACED));
  if (text === undefined) return null;
  let raw: unknown = null;
  try {
    raw = JSON.parse(text);
  } catch {
    // keep raw null
  }
  const parsed = ReplacedMarker.safeParse(raw);
  if (parsed.success) {
    const m = parsed.data;
    return { replacedBy: m.replaced_by, reason: m.reason, at: m.at, marker: true };
  }
  const r = isRecord(raw) ? raw : {};
  return { replacedBy: str(r.replaced_by), reason: str(r.reason) ?? "retried", at: str(r.at), marker: true };
}
