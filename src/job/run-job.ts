// One job: one pass over the tasks, `concurrency` trials at a time (each also through the run's
// trial gate, shared with the jobs running beside it), infrastructure failures
// retried, already-finished trials kept (resume), summary.json at the end.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Agent } from "../agents/types.js";
import { type Rollout, readResult, SUMMARY } from "../jobs-dir/index.js";
import { runRollout } from "../rollout/run.js";
import type { RolloutHooks, RolloutPlan } from "../rollout/types.js";
import type { SandboxBackend } from "../sandbox/types.js";
import { isRetryable } from "../schemas/outcome.js";
import type { JobSummary, RolloutResult } from "../schemas/result.js";
import type { Task } from "../task/types.js";
import { writeJsonAtomic } from "../util/fs.js";
import { Limiter, mapLimit } from "../util/limit.js";
import { finalAttempt, markReplaced, needsRun, newRolloutName, scanAttempts } from "./attempts.js";
import type { RunBreaker } from "./breaker.js";
import { acquireLock } from "./lock.js";
import { SUMMARY_FLOATS, summarize } from "./summary.js";

export interface JobTask {
  task: Task;
  digest: string;
}

export interface JobSpec {
  jobDir: string;
  jobName: string;
  /** "trial-01": the folder of this repeat job (the field on disk stays `trial`). */
  repeatLabel: string;
  tasks: JobTask[];
  agent: Agent;
  model: string | null;
  backend: SandboxBackend;
  concurrency: number;
  /** The run's bound on trials at once, shared with the jobs that run beside this one. */
  rolloutGate?: Limiter;
  retryAttempts: number;
  agentEnv: Record<string, string>;
  settings: Record<string, unknown>;
  signal: AbortSignal;
  /** Per-trial additions to the plan, e.g. model access through the gateway and its usage in finalize. */
  prepareRollout?(rolloutName: string, rolloutDir: string): Promise<RolloutHooks>;
  warn(message: string): void;
  onRolloutStart?(info: { task: string; rolloutName: string }): void;
  onRolloutEnd?(result: RolloutResult): void;
  retryBackoffMs?: number;
  deferCleanup?(work: Promise<void>): void;
  /** Shared by the run's jobs: when it trips, no more trials start (see breaker.ts). */
  breaker?: RunBreaker;
  /** Where a planned trial runs: absent, here (runTrial); --executor slurm places it on a node. */
  startRollout?(plan: RolloutPlan): Promise<RolloutResult>;
}

export interface JobOutcome {
  jobDir: string;
  repeat: string;
  summary: JobSummary;
  /** The final attempt of every task, in task order. */
  results: RolloutResult[];
}

export async function runJob(spec: JobSpec): Promise<JobOutcome> {
  const startedAt = new Date();
  const lock = await acquireLock(spec.jobDir);
  try {
    const existing = await scanAttempts(spec.jobDir);
    const results = new Map<string, RolloutResult>();
    const pending: { jobTask: JobTask; previous: Rollout[] }[] = [];
    for (const jobTask of spec.tasks) {
      const attempts = existing.get(jobTask.task.name) ?? [];
      const final = finalAttempt(attempts);
      const kept = final && !needsRun(final) ? (await readResult(final.dir)).result : null;
      if (kept) results.set(jobTask.task.name, kept);
      else pending.push({ jobTask, previous: attempts.filter((a) => !a.replaced?.marker) });
    }
    const cleanups: Promise<void>[] = [];
    const withCleanup: JobSpec = { ...spec, deferCleanup: (work) => cleanups.push(work) };
    let notStarted = 0;
    try {
      const gate = spec.rolloutGate ?? new Limiter(spec.concurrency);
      await mapLimit(pending, spec.concurrency, ({ jobTask, previous }) =>
        // Checked once a slot is free: the run may have stopped while this trial waited for one.
        gate.run(async () => {
          if (spec.signal.aborted) return;
          if (spec.breaker?.signal.aborted) {
            notStarted++;
            return;
          }
          results.set(jobTask.task.name, await runWithRetries(withCleanup, jobTask, previous));
        }),
      );
    } finally {
      await Promise.all(cleanups);
    }
    const ordered = spec.tasks
      .map((t) => results.get(t.task.name))
      .filter((r): r is RolloutResult => r !== undefined);
    const summary = summarize(ordered, {
      jobName: spec.jobName,
      agent: spec.agent.name,
      model: spec.model,
      environment: spec.backend.kind,
      concurrency: spec.concurrency,
      startedAt,
      notStarted,
      stopped: notStarted > 0 ? (spec.breaker?.stopped ?? null) : null,
    });
    if (!spec.signal.aborted)
      await writeJsonAtomic(path.join(spec.jobDir, SUMMARY), summary, {
        durable: true,
        floats: SUMMARY_FLOATS,
      });
    return { jobDir: spec.jobDir, repeat: spec.repeatLabel, summary, results: ordered };
  } finally {
    await lock.release();
  }
}

async function runWithRetries(spec: JobSpec, jobTask: JobTask, previous: Rollout[]): Promise<RolloutResult> {
  let attempt = previous.length + 1;
  let replaces: string | null = null;
  let rolloutName = newRolloutName(jobTask.task.name);
  // Attempts a killed or interrupted run left behind, or that failed on infrastructure, are replaced
  // by this one, never counted twice.
  for (const old of previous) {
    const finished = old.resultState === "present" && old.outcome.errorCategory !== "interrupted";
    await markReplaced(old.dir, rolloutName, finished ? "resumed" : "interrupted");
    replaces = old.name;
  }
  for (let retry = 0; ; retry++) {
    spec.onRolloutStart?.({ task: jobTask.task.name, rolloutName });
    const result = await runOne(spec, jobTask, { rolloutName, attempt, replaces });
    spec.breaker?.note(result);
    // A task that cannot run as written fails the same way in every trial: say it once, with the fix.
    if (result.error_category === "task_error") spec.warn(`task ${jobTask.task.name}: ${result.error}`);
    const retryable = isRetryable(result.error_category);
    const stopped = spec.signal.aborted || spec.breaker?.signal.aborted === true;
    if (!retryable || retry >= spec.retryAttempts || stopped) {
      spec.onRolloutEnd?.(result);
      return result;
    }
    const next = newRolloutName(jobTask.task.name);
    await markReplaced(path.join(spec.jobDir, rolloutName), next, "retried");
    spec.warn(
      `${spec.repeatLabel} ${rolloutName}: ${result.error_category} (${result.error}); retrying as ${next}`,
    );
    await sleep((spec.retryBackoffMs ?? 500) * 2 ** retry);
    replaces = rolloutName;
    rolloutName = next;
    attempt++;
  }
}

async function runOne(
  spec: JobSpec,
  jobTask: JobTask,
  ids: { rolloutName: string; attempt: number; replaces: string | null },
): Promise<RolloutResult> {
  const rolloutDir = path.join(spec.jobDir, ids.rolloutName);
  const hooks = await spec.prepareRollout?.(ids.rolloutName, rolloutDir);
  const plan: RolloutPlan = {
    task: jobTask.task,
    taskDigest: jobTask.digest,
    jobDir: spec.jobDir,
    jobName: spec.jobName,
    repeatLabel: spec.repeatLabel,
    rolloutName: ids.rolloutName,
    attempt: ids.attempt,
    replaces: ids.replaces,
    agent: spec.agent,
    model: spec.model,
    backend: spec.backend,
    settings: spec.settings,
    agentEnv: spec.agentEnv,
    signal: spec.signal,
    warn: spec.warn,
    deferCleanup: spec.deferCleanup,
    hooks,
  };
  return (spec.startRollout ?? runRollout)(plan);
}
