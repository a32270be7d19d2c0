// validate's checks of the data behind the rows (upstream's flags): `--source-jobs DIR` adds the
// health of the rollouts (scored, with tool calls, with a readable llm_trajectory.jsonl),
// `--source-canonical-selection FILE` counts (and, with --source-jobs, restricts the health to)
// the selected rollouts, `--task-manifest FILE` counts its tasks. `--require-tool-calls` and
// `--require-llm-trajectory` turn the health into failures.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import {
  RESULT,
  readCanonicalSelection,
  readObject,
  readSelectionList,
  scanRollouts,
  TRAJECTORY,
} from "../../jobs-dir/index.js";
import { opt } from "../../options.js";
import { isRecord, readJsonLines } from "../../util/jsonl.js";
import { tokenCoverage } from "../tokens/coverage.js";

export interface SourceHealth {
  total_rows: number;
  scored_rows: number;
  unscored_rows: number;
  rows_with_tool_calls: number;
  missing_llm_trajectory: number;
  malformed_llm_trajectory: number;
}

export interface SourceOptions {
  sourceJobs?: string;
  sourceCanonicalSelection?: string;
  taskManifest?: string;
  requireToolCalls?: boolean;
  requireLlmTrajectory?: boolean;
  /** The rows are tokens rows: report the source rollouts that wrote none (masked) and why. */
  tokens?: boolean;
  /** With tokens: a masked rollout fails validation. */
  requireTrainingGrade?: boolean;
}

/**
 * Token rows fail closed: a rollout whose ids cannot be trusted writes no row. Validate names each
 * one, so a trainer can tell a masked rollout from a lost one.
 */
export interface TokenMasking {
  rollouts: number;
  training_grade_rollouts: number;
  masked_rollouts: number;
  masked: Array<{ rollout_dir: string; reason: string }>;
}

export interface SourceReport {
  fields: {
    source_health?: SourceHealth;
    canonical_selected_rows?: number;
    task_manifest_rows?: number;
    token_masking?: TokenMasking;
  };
  /** Failures, as sentences (validate prints each on stderr and exits 1). */
  problems: string[];
  /** Facts a person should see that are not failures (a masked rollout), one sentence each. */
  notes: string[];
}

async function tokenMasking(sourceJobs: string): Promise<TokenMasking> {
  const coverage = await tokenCoverage(sourceJobs);
  const masked = coverage.per_rollout
    .filter((r) => !r.training_grade)
    .map((r) => ({ rollout_dir: r.rollout_dir, reason: r.reason ?? "not training-grade" }));
  return {
    rollouts: coverage.rollouts,
    training_grade_rollouts: coverage.training_grade_rollouts,
    masked_rollouts: masked.length,
    masked,
  };
}

const count = (v: unknown): number | null =>
  Number.isInteger(v) && (v as number) >= 0 ? (v as number) : null;

/** Upstream's count: the result's n_tool_calls, else agent_result's, else the trajectory summary's. */
function toolCallsOf(result: Record<string, unknown>): number {
  const agent = isRecord(result.agent_result) ? result.agent_result : {};
  const summary = isRecord(result.trajectory_summary) ? result.trajectory_summary : {};
  return count(result.n_tool_calls) ?? count(agent.n_tool_calls) ?? count(summary.tool_call_steps) ?? 0;
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Scored: rewards.reward (or a legacy top-level reward) is a number. */
function scoredOf(result: Record<string, unknown>): boolean {
  const rewards = isRecord(result.rewards) ? result.rewards : {};
  return isNumber(rewards.reward) || isNumber(result.reward);
}

async function trajectoryState(dir: string): Promise<"missing" | "malformed" | "ok"> {
  try {
    const lines = await readJsonLines(path.join(dir, TRAJECTORY));
    if (lines === undefined) return "missing";
    return lines.every(isRecord) ? "ok" : "malformed";
  } catch (err) {
    if (err instanceof UserInputError) return "malformed";
    throw err;
  }
}

/** The health of rollout folders; a folder without a readable result.json is not a row. */
async function healthOf(dirs: readonly string[]): Promise<SourceHealth> {
  const h: SourceHealth = {
    total_rows: 0,
    scored_rows: 0,
    unscored_rows: 0,
    rows_with_tool_calls: 0,
    missing_llm_trajectory: 0,
    malformed_llm_trajectory: 0,
  };
  for (const dir of dirs) {
    const result = await readObject(path.join(dir, RESULT));
    if (!result) continue;
    h.total_rows++;
    if (scoredOf(result)) h.scored_rows++;
    else h.unscored_rows++;
    if (toolCallsOf(result) > 0) h.rows_with_tool_calls++;
    const traj = await trajectoryState(dir);
    if (traj === "missing") h.missing_llm_trajectory++;
    else if (traj === "malformed") h.malformed_llm_trajectory++;
  }
  return h;
}

/** The rollouts convert reads under a path: each rollout's final attempt (a retried one is not a row). */
async function finalRollouts(sourceJobs: string): Promise<string[]> {
  const scan = await scanRollouts(sourceJobs);
  return scan.rollouts.filter((r) => !r.replaced).map((r) => r.dir);
}

async function readJsonFile(file: string, flag: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    throw new UserInputError(`${flag} ${file}: no such file.`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message}).`);
  }
}

export async function checkSource(opts: SourceOptions): Promise<SourceReport> {
  const report: SourceReport = { fields: {}, problems: [], notes: [] };
  const flag = opt("sourceCanonicalSelection");
  const selFile = opts.sourceCanonicalSelection;
  // Counted as listed (upstream's count); its rollouts are looked for only to check their health.
  const listed = selFile ? await readSelectionList(selFile, flag) : null;
  const selection =
    selFile && opts.sourceJobs !== undefined ? await readCanonicalSelection(selFile, flag) : null;
  if (opts.sourceJobs !== undefined) {
    const stat = await fs.stat(opts.sourceJobs).catch(() => null);
    if (!stat?.isDirectory())
      throw new UserInputError(
        `${opt("sourceJobs")} ${opts.sourceJobs}: no such folder. Give the jobs folder the rows came from.`,
      );
    const health = await healthOf(selection ? selection.dirs : await finalRollouts(opts.sourceJobs));
    report.fields.source_health = health;
    if (
      opts.requireLlmTrajectory &&
      (health.missing_llm_trajectory > 0 || health.malformed_llm_trajectory > 0)
    ) {
      report.problems.push(
        `source jobs contain missing/malformed llm_trajectory.jsonl: ${health.missing_llm_trajectory} missing, ` +
          `${health.malformed_llm_trajectory} malformed of ${health.total_rows} rollout(s)`,
      );
    }
    if (opts.requireToolCalls && health.rows_with_tool_calls !== health.total_rows) {
      report.problems.push(
        `not all source rows contain tool calls: ${health.rows_with_tool_calls} / ${health.total_rows}`,
      );
    }
    if (opts.tokens) {
      const masking = await tokenMasking(opts.sourceJobs);
      report.fields.token_masking = masking;
      const lines = masking.masked.map((m) => `${m.rollout_dir}: masked, no tokens row (${m.reason})`);
      if (opts.requireTrainingGrade && masking.masked_rollouts > 0)
        report.problems.push(
          `${masking.masked_rollouts} of ${masking.rollouts} source rollout(s) are not training-grade`,
          ...lines,
        );
      else report.notes.push(...lines);
    }
  } else if (opts.requireLlmTrajectory || opts.requireTrainingGrade) {
    const flag = opts.requireLlmTrajectory ? opt("requireLlmTrajectory") : opt("requireTrainingGrade");
    throw new UserInputError(`${flag} checks the source rollouts: give ${opt("sourceJobs", "DIR")} too.`);
  }
  if (listed) report.fields.canonical_selected_rows = listed.rows.length;
  if (opts.taskManifest !== undefined) {
    const data = await readJsonFile(opts.taskManifest, opt("taskManifest"));
    const tasks = isRecord(data) ? data.tasks : undefined;
    if (!Array.isArray(tasks))
      throw new Error(
        `${opts.taskManifest}: "tasks" must be a list (a task manifest is {tasks: [{task_id, path, digest}]}).`,
      );
    report.fields.task_manifest_rows = tasks.length;
  }
  return report;
}
