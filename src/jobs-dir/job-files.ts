// The files of a job folder: the plan, the summary, the lock, and what they say about the job's
// state. Each is read leniently: folders written by upstream or by an older version carry other
// fields, and a reader must still find the facts it needs.
import { promises as fs } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { z } from "zod";
import { type GroupSampling, samplingOf } from "../schemas/group-identity.js";
import { JobSummary } from "../schemas/result.js";
import { pidAlive } from "../util/process.js";
import { LOCK, PLAN, SUMMARY } from "./layout.js";
import { readObject } from "./result-file.js";

/** What readers need of a job's evaluation.json, whoever wrote it (another writer's lacks fields we write). */
export interface PlanFacts {
  agent: string | null;
  model: string | null;
  /** The tasks the job was planned for, with the digest of each when the plan records it. */
  tasks: Array<{ name: string; digest: string | null }>;
  /** Retries of an infrastructure failure the run allowed (0 when the plan does not say). */
  retryAttempts: number;
  /** The name the run's repeat jobs share (ours record it); null when the plan does not say. */
  jobName: string | null;
  /** The run's --policy-version and sampling, when the plan records them (older plans do not). */
  policyVersion: string | null;
  sampling: GroupSampling | null;
}

/** The facts, read from a plan of any writer: a field missing or of another type reads as unknown. */
const PlanRead = z.object({
  agent: z.string().min(1).nullable().catch(null),
  model: z.string().min(1).nullable().catch(null),
  tasks: z
    .array(
      z
        .object({ name: z.string().min(1), digest: z.string().min(1).nullable().catch(null) })
        .nullable()
        .catch(null),
    )
    .catch([]),
  retry_attempts: z.number().catch(0),
  job_name: z.string().min(1).nullable().catch(null),
  policy_version: z.string().min(1).nullable().catch(null),
  sampling: z.unknown().optional(),
});

export async function readPlan(jobDir: string): Promise<PlanFacts | null> {
  const raw = await readObject(path.join(jobDir, PLAN));
  if (!raw) return null;
  const p = PlanRead.parse(raw);
  return {
    agent: p.agent,
    model: p.model,
    tasks: p.tasks.filter((t) => t !== null),
    retryAttempts: p.retry_attempts,
    jobName: p.job_name,
    policyVersion: p.policy_version,
    sampling: samplingOf(p.sampling),
  };
}

/** Why a run stopped starting rollouts (summary.json `stopped`). */
export interface RunStop {
  reason: string;
  message: string;
}

/** What readers need of summary.json, present whether or not the rest of it is our schema. */
export interface SummaryFacts {
  /** The whole summary when it is ours (upstream's lacks fields we write). */
  summary: JobSummary | null;
  /** Planned rollouts the run never started. */
  notStarted: number;
  /** Set when the run stopped starting rollouts: the endpoint kept failing, or a configuration error. */
  stopped: RunStop | null;
}

export async function readSummary(jobDir: string): Promise<SummaryFacts | null> {
  const raw = await readObject(path.join(jobDir, SUMMARY));
  if (!raw) return null;
  const parsed = JobSummary.safeParse(raw);
  if (parsed.success) {
    const s = parsed.data;
    return { summary: s, notStarted: s.not_started, stopped: s.stopped };
  }
  const notStarted = typeof raw.not_started === "number" ? raw.not_started : 0;
  const stop = raw.stopped as Record<string, unknown> | null | undefined;
  const stopped =
    stop && typeof stop === "object" && typeof stop.reason === "string"
      ? { reason: stop.reason, message: typeof stop.message === "string" ? stop.message : "" }
      : null;
  return { summary: null, notStarted, stopped };
}

/** `.evaluation.lock`: which process runs the job. A lock being written reads as held by us. */
export async function readLock(jobDir: string): Promise<{ pid: number; host: string | null } | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(jobDir, LOCK), "utf8");
  } catch {
    return null;
  }
  try {
    const v = JSON.parse(text);
    if (typeof v?.pid === "number") return { pid: v.pid, host: typeof v.host === "string" ? v.host : null };
  } catch {
    // Mid-write: treat it as held.
  }
  return { pid: process.pid, host: null };
}

/** running: a live process holds the lock; finished: summary.json is written; stopped: the run died; waiting: planned. */
export type JobState = "running" | "finished" | "stopped" | "waiting";

/**
 * `started`: the job folder of an evaluation already holds rollouts. Such a job with neither lock
 * nor summary was left by a run that stopped (an interrupted run releases its lock but writes no
 * summary); one without rollouts is planned and waits for its turn.
 */
export async function jobState(jobDir: string, started = false): Promise<JobState> {
  const [lock, summary] = await Promise.all([
    readLock(jobDir),
    fs.stat(path.join(jobDir, SUMMARY)).catch(() => null),
  ]);
  if (!lock) return summary ? "finished" : started ? "stopped" : "waiting";
  // A process on another machine cannot be checked from here: assume it still runs.
  if (lock.host !== null && lock.host !== hostname()) return "running";
  if (pidAlive(lock.pid)) return "running";
  // The lock outlived its process: done if the summary got written, else the run died.
  return summary ? "finished" : "stopped";
}
