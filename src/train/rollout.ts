// What the train side knows about one rollout folder before reading its model calls: its result (or
// that the result is missing or cut short), its group key values, and whether a retry replaced it.
import { promises as fs } from "node:fs";
import path from "node:path";
import { outcomeOf, type ScoreOutcome, scoreOutcomeOf } from "../schemas/outcome.js";
import {
  type EvaluationPlan,
  ReplacedMarker,
  TrialResult,
  taskNameFromRolloutDir,
} from "../schemas/result.js";
import { REPLACED, RESULT } from "./discover.js";
import { isRecord } from "./jsonl.js";

export type ResultState = "present" | "missing" | "truncated";

export interface JobInfo {
  dir: string;
  /** The `job` group key and the `job` field of rows and records. */
  id: string;
  plan: EvaluationPlan | null;
  isEvaluation: boolean;
}

export interface RolloutFacts {
  dir: string;
  /** The folder below the path the user gave (a stream record's rollout_path). */
  relPath: string;
  /** The folder as the user would write it: their path joined with relPath. */
  displayDir: string;
  name: string;
  job: JobInfo;
  /** What rows and records need of result.json (kept small: convert holds one per rollout). */
  result: ResultSummary | null;
  resultState: ResultState;
  /** Why a present file did not read as a result (cut short or not the result schema). */
  resultProblem: string | null;
  task: string;
  agent: string | null;
  model: string | null;
  taskDigest: string | null;
  /** A finite rewards.reward, else null (unscored: never 0). */
  reward: number | null;
  /** The error category a trainer masks on: agent side first, then verifier side. */
  error: string | null;
  outcome: string | null;
  replaced: ReplacedMarker | null;
  attempt: number | null;
  startedAt: string | null;
  finishedAt: string | null;
  mtimeMs: number;
}

export interface ResultSummary {
  errorCategory: string | null;
  verifierErrorCategory: string | null;
  /** An error, a verifier error or a partial trajectory: without groups such a rollout gives no row. */
  endedWithError: boolean;
  scoreOutcome: ScoreOutcome;
  usage: Record<string, unknown> | undefined;
  replaces: string | null;
  policyVersion: string | null;
}

function summaryOf(r: TrialResult, reward: number | null): ResultSummary {
  const own = (r as Record<string, unknown>).policy_version;
  return {
    errorCategory: r.error_category,
    verifierErrorCategory: r.verifier_error_category,
    endedWithError: Boolean(
      r.error || r.verifier_error || r.error_category || r.verifier_error_category || r.partial_trajectory,
    ),
    scoreOutcome: scoreOutcomeOf({
      reward,
      error_category: r.error_category,
      verifier_error_category: r.verifier_error_category,
    }),
    usage: r.agent_result as Record<string, unknown> | undefined,
    replaces: str(r.replaces),
    policyVersion: typeof own === "string" || typeof own === "number" ? String(own) : null,
  };
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

async function readObject(file: string): Promise<Record<string, unknown> | null> {
  const text = await readText(file);
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text);
    return isRecord(v) ? v : null;
  } catch {
    return null;
  }
}

type ParsedResult = { state: ResultState; result: TrialResult | null; problem: string | null };

export async function readResult(dir: string): Promise<ParsedResult> {
  const text = await readText(path.join(dir, RESULT));
  if (text === undefined) return { state: "missing", result: null, problem: null };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { state: "truncated", result: null, problem: `not valid JSON (${(err as Error).message})` };
  }
  const parsed = TrialResult.safeParse(raw);
  if (parsed.success) return { state: "present", result: parsed.data, problem: null };
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".") || "(top level)";
  return { state: "truncated", result: null, problem: `field ${field}: ${issue?.message ?? "invalid"}` };
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function errorOf(r: TrialResult): string | null {
  if (r.error_category) return r.error_category;
  if (r.verifier_error_category) return r.verifier_error_category;
  // Folders that name an error but no category still must be maskable.
  if (r.error) return "agent_error";
  if (r.verifier_error) return "verifier_failure";
  return null;
}

export function finiteReward(r: TrialResult | null): number | null {
  const v = r?.rewards?.reward;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export async function readRollout(
  dir: string,
  where: { job: JobInfo; root: string; displayRoot: string },
): Promise<RolloutFacts> {
  const [{ state, result, problem }, markerRaw, stat] = await Promise.all([
    readResult(dir),
    readObject(path.join(dir, REPLACED)),
    fs.stat(dir).catch(() => null),
  ]);
  const marker = markerRaw ? ReplacedMarker.safeParse(markerRaw) : null;
  const name = path.basename(dir);
  const plan = where.job.plan;
  // A missing or cut-short result still belongs to its group: key values from the plan or config.json.
  const config = result ? null : await readObject(path.join(dir, "config.json"));
  const task = str(result?.task_name) ?? taskNameFromRolloutDir(name);
  const rel = path.relative(where.root, dir);
  const errorCategory = result ? errorOf(result) : null;
  const reward = finiteReward(result);
  return {
    dir,
    relPath: rel.split(path.sep).join("/") || name,
    displayDir: rel ? path.join(where.displayRoot, rel) : where.displayRoot,
    name,
    job: where.job,
    result: result ? summaryOf(result, reward) : null,
    resultState: state,
    resultProblem: problem,
    task,
    agent: str(result?.agent) ?? str(plan?.agent) ?? str(config?.agent),
    model: result ? (result.model ?? null) : (str(plan?.model) ?? str(config?.model)),
    taskDigest:
      str(result?.task_digest) ??
      str(plan?.tasks.find((t) => t.name === task)?.digest) ??
      str(config?.task_digest),
    reward,
    error: errorCategory,
    outcome: result
      ? result.outcome !== undefined
        ? result.outcome
        : outcomeOf(
            result.error_category ?? (result.error ? "agent_error" : null),
            result.verifier_error_category,
          )
      : null,
    replaced: marker?.success ? marker.data : null,
    attempt: typeof result?.attempt === "number" ? result.attempt : null,
    startedAt: str(result?.started_at),
    finishedAt: str(result?.finished_at),
    mtimeMs: stat?.mtimeMs ?? 0,
  };
}
