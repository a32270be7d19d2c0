// What a job folder already holds: for each task, its attempts, which one is final, and whether
// that one still needs running (missing result, cut short, or interrupted).
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { ReplacedMarker, rolloutNameFor, TrialResult, taskNameFromRolloutDir } from "../schemas/result.js";
import { writeJsonAtomic } from "../util/fs.js";

export type AttemptState = "finished" | "missing_result" | "truncated_result";

export interface Attempt {
  dir: string;
  name: string;
  task: string;
  state: AttemptState;
  result: TrialResult | null;
  replaced: ReplacedMarker | null;
  mtimeMs: number;
}

const ROLLOUT_DIR = /^(.+)__[0-9a-f]{8}$/;

export async function readAttempt(dir: string): Promise<Attempt> {
  const name = path.basename(dir);
  const [resultText, replacedText, stat] = await Promise.all([
    fs.readFile(path.join(dir, "result.json"), "utf8").catch(() => null),
    fs.readFile(path.join(dir, "replaced.json"), "utf8").catch(() => null),
    fs.stat(dir),
  ]);
  let state: AttemptState = "missing_result";
  let result: TrialResult | null = null;
  if (resultText !== null) {
    try {
      result = TrialResult.parse(JSON.parse(resultText));
      state = "finished";
    } catch {
      state = "truncated_result";
    }
  }
  let replaced: ReplacedMarker | null = null;
  if (replacedText !== null) {
    try {
      replaced = ReplacedMarker.parse(JSON.parse(replacedText));
    } catch {
      replaced = { replaced_by: "?", reason: "retried", at: "" };
    }
  }
  const task = result?.task_name ?? taskNameFromRolloutDir(name);
  return { dir, name, task, state, result, replaced, mtimeMs: stat.mtimeMs };
}

/** Every rollout folder of a job, grouped by task. */
export async function scanAttempts(jobDir: string): Promise<Map<string, Attempt[]>> {
  const byTask = new Map<string, Attempt[]>();
  let entries: string[];
  try {
    entries = await fs.readdir(jobDir);
  } catch {
    return byTask;
  }
  const attempts = await Promise.all(
    entries
      .filter((e) => ROLLOUT_DIR.test(e))
      .map((e) => readAttempt(path.join(jobDir, e)).catch(() => null)),
  );
  for (const a of attempts) {
    if (!a) continue;
    const list = byTask.get(a.task) ?? [];
    list.push(a);
    byTask.set(a.task, list);
  }
  for (const list of byTask.values()) list.sort((x, y) => x.mtimeMs - y.mtimeMs);
  return byTask;
}

/** The attempt that stands for the task: not replaced; scored first, then newest (upstream's rule). */
export function finalAttempt(attempts: Attempt[]): Attempt | null {
  const live = attempts.filter((a) => a.replaced === null);
  if (live.length === 0) return null;
  const scored = live.filter((a) => a.result?.rewards != null);
  const pool = scored.length > 0 ? scored : live;
  return pool[pool.length - 1] ?? null;
}

export function needsRun(final: Attempt | null): boolean {
  return final === null || final.state !== "finished" || final.result?.error_category === "interrupted";
}

export async function markReplaced(
  attempt: Attempt,
  by: string,
  reason: ReplacedMarker["reason"],
): Promise<void> {
  const marker: ReplacedMarker = { replaced_by: by, reason, at: new Date().toISOString() };
  await writeJsonAtomic(path.join(attempt.dir, "replaced.json"), marker, { durable: true });
}

export function newRolloutName(task: string): string {
  return rolloutNameFor(task, randomBytes(4).toString("hex"));
}
