// Whether a job is running, finished, or stopped because its process died: read from the lock
// (pid, host) and summary.json that `bench run` writes, as upstream's stream reads them.
import { promises as fs } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { pidAlive } from "../util/process.js";
import { LOCK, SUMMARY } from "./discover.js";
import { isRecord } from "./jsonl.js";

export type JobState = "running" | "finished" | "stopped" | "waiting";

async function readLock(dir: string): Promise<{ pid: number; host: string | null } | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, LOCK), "utf8");
  } catch {
    return null;
  }
  try {
    const v = JSON.parse(text);
    if (isRecord(v) && typeof v.pid === "number")
      return { pid: v.pid, host: typeof v.host === "string" ? v.host : null };
  } catch {
    // A lock being written: treat it as held.
  }
  return { pid: process.pid, host: null };
}

/**
 * `started`: the job folder of an evaluation already holds rollouts. Such a job with neither lock
 * nor summary was left by a run that stopped (an interrupted run releases its lock but writes no
 * summary); one without rollouts is planned and waits for its turn.
 */
export async function jobState(dir: string, started = false): Promise<JobState> {
  const [lock, summary] = await Promise.all([
    readLock(dir),
    fs.stat(path.join(dir, SUMMARY)).catch(() => null),
  ]);
  if (!lock) return summary ? "finished" : started ? "stopped" : "waiting";
  // A process on another machine cannot be checked from here: assume it still runs.
  if (lock.host !== null && lock.host !== hostname()) return "running";
  if (pidAlive(lock.pid)) return "running";
  // The lock outlived its process: done if the summary got written, else the run died.
  return summary ? "finished" : "stopped";
}
