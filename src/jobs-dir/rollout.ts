// One rollout folder as every reader sees it: its result (or that the result is missing or cut
// short), its trial key (task, agent, model), its attempt facts, the retry marker, and its outcome.
import { promises as fs } from "node:fs";
import path from "node:path";
import { type EvaluationPlan, ReplacedMarker, RolloutResult } from "../schemas/result.js";
import { type Inferred, inferResult, parsePythonJson } from "./infer.js";
import { CONFIG, groupAttemptOf, REPLACED, RESULT, taskOfRolloutName } from "./layout.js";
import { deriveOutcome, type RolloutOutcome } from "./outcome.js";

/** present: result.json parsed; missing: none yet (running, or the run died); truncated: cut short or not a result. */
export type ResultState = "present" | "missing" | "truncated";

/** A replaced.json: this attempt counts in no group. */
export interface Replaced {
  /** The rollout folder name of the attempt that replaced this one; null when the marker does not say. */
  replacedBy: string | null;
  reason: string;
  at: string | null;
}

export interface RolloutFolder {
  dir: string;
  name: string;
  resultState: ResultState;
  result: RolloutResult | null;
  /** Why a present file did not read as a result (cut short, or a field of the wrong type). */
  resultProblem: string | null;
  replaced: Replaced | null;
  task: string;
  agent: string | null;
  model: string | null;
  taskDigest: string | null;
  /** The attempt number the writer recorded (1 for the first run of a trial), else the folder name's `-aK`. */
  attempt: number | null;
  /** A rollout_group member (`<group_id>-rNN`) when the folder name says so. */
  member: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** The folder's mtime: the last tie-break of the attempt rule (a copy can change it). */
  mtimeMs: number;
  reward: number | null;
  outcome: RolloutOutcome;
  /** Read with `infer`: what was filled in for a result.json that lacks fields, and from where ({} when none). */
  inferred: Inferred;
  /** Read with `infer`: fields of the wrong type that were left out, and why. */
  ignored: Record<string, string>;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const isRecord = (v: unknown): v is Record<string, unknown> =>
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

interface ResultRead {
  state: ResultState;
  result: RolloutResult | null;
  problem: string | null;
  /** The parsed file when it is a JSON object (what inference starts from). */
  raw: Record<string, unknown> | null;
}

async function readResultFile(dir: string, infer = false): Promise<ResultRead> {
  const text = await readText(path.join(dir, RESULT));
  if (text === undefined) return { state: "missing", result: null, problem: null, raw: null };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const problem = `not valid JSON (${(err as Error).message})`;
    // Upstream's json.dumps writes NaN and Infinity: the train side reads them as null.
    const python = infer ? parsePythonJson(text) : undefined;
    return { state: "truncated", result: null, problem, raw: isRecord(python) ? python : null };
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
async function readReplaced(dir: string): Promise<Replaced | null> {
  const text = await readText(path.join(dir, REPLACED));
  if (text === undefined) return null;
  let raw: unknown = null;
  try {
    raw = JSON.parse(text);
  } catch {
    // keep raw null
  }
  const parsed = ReplacedMarker.safeParse(raw);
  if (parsed.success)
    return { replacedBy: parsed.data.replaced_by, reason: parsed.data.reason, at: parsed.data.at };
  const r = isRecord(raw) ? raw : {};
  return { replacedBy: str(r.replaced_by), reason: str(r.reason) ?? "retried", at: str(r.at) };
}

/**
 * Reads one rollout folder. A missing or cut-short result still belongs to its trial: its key values
 * come from the job's plan, else from the rollout's config.json, else from the folder name. With
 * `infer` (the train side), a result.json that lacks fields we write (upstream's) is filled in as
 * upstream's readers fill it (infer.ts), and `inferred` says what came from where.
 */
export async function readRolloutFolder(
  dir: string,
  job: { plan?: EvaluationPlan | null; infer?: boolean } = {},
): Promise<RolloutFolder> {
  const [read, replaced, stat] = await Promise.all([
    readResultFile(dir, job.infer),
    readReplaced(dir),
    fs.stat(dir).catch(() => null),
  ]);
  const name = path.basename(dir);
  const plan = job.plan ?? null;
  let { state, result, problem } = read;
  const config = result ? null : await readObject(path.join(dir, CONFIG));
  let inferred: Inferred = {};
  let ignored: Record<string, string> = {};
  if (job.infer && read.raw) {
    // config.json is read only when the strict read failed: a whole result names its agent and model.
    const filled = inferResult(read.raw, { name, config, plan });
    if ("problem" in filled) problem = filled.problem;
    else {
      ({ result, inferred, ignored } = filled);
      if (state === "truncated" && problem?.startsWith("not valid JSON"))
        ignored = { ...ignored, "(file)": "NaN or Infinity (Python's json.dumps) read as null" };
      state = "present";
      problem = null;
    }
  }
  const groupAttempt = groupAttemptOf(name);
  const task = str(result?.task_name) ?? taskOfRolloutName(name);
  const outcome = deriveOutcome(result);
  return {
    dir,
    name,
    resultState: state,
    result,
    resultProblem: problem,
    replaced,
    task,
    agent: str(result?.agent) ?? str(plan?.agent) ?? str(config?.agent),
    model: result ? (result.model ?? null) : (str(plan?.model) ?? str(config?.model)),
    taskDigest:
      str(result?.task_digest) ??
      str(plan?.tasks?.find((t) => t.name === task)?.digest) ??
      str(config?.task_digest),
    attempt: typeof result?.attempt === "number" ? result.attempt : (groupAttempt?.attempt ?? null),
    member: groupAttempt?.member ?? null,
    startedAt: str(result?.started_at),
    finishedAt: str(result?.finished_at),
    mtimeMs: stat?.mtimeMs ?? 0,
    reward: outcome.reward,
    outcome,
    inferred,
    ignored,
  };
}
