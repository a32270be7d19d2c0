// A task's controls: its own reference solution (oracle) and an agent that does nothing (nop), run on
// clean sandboxes, CONTROL_RUNS times each. A verifier that writes a reward on every control run is
// sound: when it fails after a policy acted, the policy broke it, and the rollout scores 0. One that
// fails on a control run crashes on clean runs: its failures say nothing of the policy and are masked.
// A task without a solution cannot be proven either way, and its verifier failures stay masked.
//
// The verdict is asked on a task's first verifier failure, once per task digest, sandbox kind and
// hardening (the same verifier in the same place), shared by every rollout of the run that asks, and
// cached in <jobs-dir>/.controls/ so a resumed or later run does not pay for it again.
import { promises as fs } from "node:fs";
import path from "node:path";
import { nopAgent, oracleAgent } from "../agents/oracle.js";
import type { Agent } from "../agents/types.js";
import { VerifierVerdict } from "../schemas/attribution.js";
import type { RolloutResult } from "../schemas/result.js";
import type { Task } from "../task/types.js";
import { readJsonIfExists, writeJsonAtomic } from "../util/fs.js";
import { runRollout } from "./run.js";
import { type ControlsJudge, modelFreeIdentity, type RunConfig } from "./types.js";

export const CONTROLS_DIR = ".controls";
/** Each control this many times: a verifier that fails now and then on clean runs must be caught. */
export const CONTROL_RUNS = 2;

/** What the controls of one task found (the cache file, and `bench tasks check`'s report). */
export interface ControlsReport {
  task: string;
  task_digest: string;
  sandbox: string;
  verifier_hardening: string;
  verdict: VerifierVerdict;
  /** Why, in a line. */
  reason: string;
  runs: {
    agent: string;
    reward: number | null;
    error_category: string | null;
    verifier_error_category: string | null;
    verifier_error: string | null;
  }[];
  checked_at: string;
}

export type ControlsRun = Pick<RunConfig, "backend" | "verifierHardening" | "record">;

/** The verdict of one task's controls, run now, their rollouts kept under `dir`. */
export async function runControls(
  task: Task,
  taskDigest: string,
  run: ControlsRun,
  dir: string,
  signal: AbortSignal,
): Promise<ControlsReport> {
  const base = {
    task: task.name,
    task_digest: taskDigest,
    sandbox: run.backend.kind,
    verifier_hardening: run.verifierHardening,
    checked_at: new Date().toISOString(),
  };
  if (!task.solutionDir || !task.solveScript)
    return { ...base, verdict: "unproven", reason: "the task has no solution to run as a control", runs: [] };
  const agents: Agent[] = [];
  for (let i = 0; i < CONTROL_RUNS; i++) agents.push(oracleAgent, nopAgent);
  const results = await Promise.all(
    agents.map((agent, i) => controlRollout(task, taskDigest, run, agent, dir, i, signal)),
  );
  const runs = results.map((r) => ({
    agent: r.agent,
    reward: typeof r.rewards?.reward === "number" ? r.rewards.reward : null,
    error_category: r.error_category,
    verifier_error_category: r.verifier_error_category,
    verifier_error: r.verifier_error,
  }));
  return { ...base, ...verdictOf(runs), runs };
}

/** Sound when every control run was scored; crashes when one was not though the run itself went right. */
export function verdictOf(runs: ControlsReport["runs"]): Pick<ControlsReport, "verdict" | "reason"> {
  const failed = runs.find((r) => r.reward === null && isVerifierSide(r));
  if (failed)
    return {
      verdict: "crashes_on_clean_run",
      reason: `the verifier failed on a clean ${failed.agent} run: ${failed.verifier_error ?? failed.error_category}`,
    };
  const lost = runs.find((r) => r.reward === null);
  if (lost)
    return {
      verdict: "unproven",
      reason: `a ${lost.agent} control did not reach the verifier (${lost.error_category})`,
    };
  return { verdict: "sound", reason: `${runs.length} clean runs (oracle and nop) were all scored` };
}

/** The verifier itself failed: its own error, or ours while it ran (the agent phase went right). */
function isVerifierSide(r: ControlsReport["runs"][number]): boolean {
  return r.verifier_error_category !== null || r.error_category === "infra_error";
}

async function controlRollout(
  task: Task,
  taskDigest: string,
  run: ControlsRun,
  agent: Agent,
  dir: string,
  i: number,
  signal: AbortSignal,
): Promise<RolloutResult> {
  const repeat = `control-${String(i + 1).padStart(2, "0")}`;
  return runRollout({
    run: {
      ...run,
      jobName: path.basename(dir),
      agent,
      model: null,
      agentEnv: {},
      groupIdentity: modelFreeIdentity(path.basename(dir), agent.name),
    },
    job: { dir, repeat },
    task,
    taskDigest,
    rolloutName: `${agent.name}-${repeat}`,
    attempt: 1,
    replaces: null,
    signal,
    warn: () => undefined,
  });
}

/** Where a task's verdict is cached, and its controls' rollouts kept, under a jobs folder. */
function controlsPaths(
  jobsDir: string,
  task: Task,
  digest: string,
  run: ControlsRun,
): { file: string; dir: string } {
  const key = `${task.name}-${digest.replace(/^sha256:/, "").slice(0, 12)}-${run.backend.kind}-${run.verifierHardening}`;
  const root = path.join(jobsDir, CONTROLS_DIR);
  return { file: path.join(root, `${key}.json`), dir: path.join(root, key) };
}

/** Runs a task's controls now (`bench tasks check`), and caches what they proved for later runs. */
export async function checkControls(
  task: Task,
  digest: string,
  run: ControlsRun,
  jobsDir: string,
  signal: AbortSignal,
): Promise<ControlsReport> {
  const { file, dir } = controlsPaths(jobsDir, task, digest, run);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.dirname(file), { recursive: true });
  const report = await runControls(task, digest, run, dir, signal);
  // A control that never reached the verifier proves nothing for later runs: asked again then.
  if (report.verdict !== "unproven" || report.runs.length === 0) await writeJsonAtomic(file, report);
  return report;
}

/** One judge per run: concurrent rollouts of a task wait for the same controls; a verdict on disk is reused. */
export function controlsJudge(
  jobsDir: string,
  run: ControlsRun,
  onReport?: (report: ControlsReport) => void,
): ControlsJudge {
  const asked = new Map<string, Promise<VerifierVerdict>>();
  const judge = async (task: Task, digest: string, signal: AbortSignal): Promise<VerifierVerdict> => {
    const cached = await readJsonIfExists<ControlsReport>(controlsPaths(jobsDir, task, digest, run).file);
    const verdict = VerifierVerdict.safeParse(cached?.verdict);
    if (cached && verdict.success) {
      onReport?.(cached);
      return verdict.data;
    }
    const report = await checkControls(task, digest, run, jobsDir, signal);
    onReport?.(report);
    return report.verdict;
  };
  return {
    dir: jobsDir,
    verdict(task, digest, signal) {
      const key = `${task.name}\0${digest}`;
      let v = asked.get(key);
      if (!v) {
        v = judge(task, digest, signal);
        asked.set(key, v);
      }
      return v;
    },
  };
}

/** What the user must hear of a verdict that masks the task's verifier failures; null when sound. */
export function controlsWarning(report: ControlsReport): string | null {
  if (report.verdict === "sound") return null;
  if (report.verdict === "crashes_on_clean_run")
    return `task ${report.task}: its verifier fails on clean runs of its own controls (${report.reason}); its verifier failures are masked (verifier_crash_clean_run), not charged to the policy — fix the verifier (the controls' rollouts are in ${CONTROLS_DIR}/ of the jobs folder)`;
  return `task ${report.task}: unproven: ${report.reason}, so a verifier failure cannot be told from the policy's sabotage; such rollouts are masked (verifier_unproven) — add a reference solution (solution/solve.sh) so its controls can run`;
}
