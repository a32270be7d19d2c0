// The names of the jobs directory, in one place: every reader and writer of
//   <jobs-dir>/<agent>/trial-NN/<job>/<task>__<8 hex>/
// takes its file names and folder patterns from here, so a new layout (upstream's, a viewer's)
// changes one file.
import path from "node:path";
import { rolloutNameFor, taskNameFromRolloutDir } from "../schemas/result.js";

/** Rollout folder: written last, atomically; its presence means the rollout is final. */
export const RESULT = "result.json";
export const CONFIG = "config.json";
export const TIMING = "timing.json";
export const PROMPTS = "prompts.json";
/** Beside an attempt that a retry or a resume replaced: it counts in no group. */
export const REPLACED = "replaced.json";
/** The verifier's second run on a fresh copy of the workspace, after its first failed (rollout/verify.ts). */
export const VERIFIER_RERUN = "verifier-rerun";
export const TRAJECTORY_DIR = "trajectory";
/** One model call a line (the gateway's record). */
export const TRAJECTORY = path.join(TRAJECTORY_DIR, "llm_trajectory.jsonl");
/** The agent's events (user_message, agent_message, tool_call, ...). */
export const ACP_TRAJECTORY = path.join(TRAJECTORY_DIR, "acp_trajectory.jsonl");

/** Job folder: the plan (written before the run starts), the counts (when the job ends), the lock. */
export const PLAN = "evaluation.json";
export const SUMMARY = "summary.json";
export const LOCK = ".evaluation.lock";

/** Any of these makes a folder a job of an evaluation: attempts of one task in it are retries. */
export const JOB_MARKERS: readonly string[] = [PLAN, SUMMARY, LOCK];
/** A folder with none of the job markers and one of these is a rollout, whatever its name. */
export const ROLLOUT_MARKERS: readonly string[] = [RESULT, CONFIG, REPLACED, TRAJECTORY_DIR];

/** Upstream names a rollout folder `<task>__<8 hex>`. */
const ROLLOUT_NAME = /^(.+)__[0-9a-f]{8}$/;
/** Upstream's `bf.rollout_group` names attempt K of member NN of a group `<task>__<group_id>-rNN-aK`. */
const GROUP_ATTEMPT_NAME = /^(.+)__(.+)-r(\d+)-a(\d+)$/;
/** The repeat a job belongs to: `trial-01`, `trial-02`, ... (at least two digits). */
const REPEAT_DIR = /^trial-\d+$/;

export function isRolloutName(name: string): boolean {
  return ROLLOUT_NAME.test(name);
}

/** A rollout_group attempt: its member (`<group_id>-rNN`, one rollout) and its attempt number K. */
export function groupAttemptOf(name: string): { member: string; attempt: number } | null {
  const m = GROUP_ATTEMPT_NAME.exec(name);
  if (!m) return null;
  return { member: `${m[2]}-r${m[3]}`, attempt: Number(m[4]) };
}

function isRepeatDir(name: string): boolean {
  return REPEAT_DIR.test(name);
}

/** `trial-01` when the job folder sits in a trial-NN folder, else null. */
export function repeatOf(jobDir: string): string | null {
  const parent = path.basename(path.dirname(jobDir));
  return isRepeatDir(parent) ? parent : null;
}

// The name functions live with the result schema (writers use them); readers get them from here.
export { rolloutNameFor, taskNameFromRolloutDir as taskOfRolloutName };
