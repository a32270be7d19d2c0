// One job: one pass over the tasks, `concurrency` rollouts at a time (each also through the run's
// gate, shared with the jobs running beside it), infrastructure failures retried, already-finished
// rollouts kept (resume), summary.json at the end. The run's configuration comes in once, as the
// run made it (job/plan.ts), and goes to each rollout as it is.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Rollout, readResult, SUMMARY } from "../jobs-dir/index.js";
import { runRollout } from "../rollout/run.js";
import type { ControlsJudge, JobRef, RolloutHooks, RolloutPlan, RunConfig } from "../rollout/types.js";
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

/** What a job needs of its run: the rollouts' configuration, the tasks and the job's bounds. */
export interface JobRun extends RunConfig {
  tasks: JobTask[];
  /** Rollouts at once within the job (-j). */
  concurrency: number;
  /** Retries of an infrastructure failure. */
  retryAttempts: number;
  /** The first retry's wait; each next one waits twice as long. */
  retryBackoffMs: number;
}

/** One job of a run: the run as planned, which repeat this is, and what the run lends each job. */
export interface JobSpec {
  run: JobRun;
  job: JobRef;
  signal: AbortSignal;
  warn(message: string): void;
  /** The run's bound on rollouts at once, shared with the jobs that run beside this one. */
  rolloutGate?: Limiter;
  /** Shared by the run's jobs: when it trips, no more rollouts start (see breaker.ts). */
  breaker?: RunBreaker;
  /** Per-rollout additions to the plan: model access through the gateway, its witness and usage. */
  prepareRollout?(rolloutName: string, rolloutDir: string): Promise<RolloutHooks>;
  /** Where a planned rollout runs: absent, here (runRollout); --executor slurm places it on a node. */
  startRollout?(plan: RolloutPlan): Promise<RolloutResult>;
  /** The run's judge of verifier failures (rollout/controls.ts); absent: they stay masked. */
  controls?: ControlsJudge;
  onRolloutStart?(info: { task: string; rolloutName: string }): void;
  /** A rollout's phase as it begins (RolloutPlan.onPhase). */
  onRolloutPhase?(info: { task: string; rolloutName: string; phase: string }): void;
  onRolloutEnd?(result: RolloutResult): void;
  deferCleanup?(work: Promise<void>): void;
}

export interface JobOutcome {
  jobDir: string;
  repeat: string;
  summary: JobSummary;
  /** The final attempt of every task, in task order. */
  results: RolloutResult[];
}

export async function runJob(spec: JobSpec): Promise<JobOutcome> {
  const { run, job } = spec;
  const startedAt = new Date();
  const lock = await acquireLock(job.dir);
  try {
    const { results, pending } = await whatIsLeft(spec);
    const notStarted = await runPending(spec, pending, results);
    const ordered = run.tasks
      .map((t) => results.get(t.task.name))
      .filter((r): r is RolloutResult => r !== undefined);
    const summary = summarize(ordered, {
      jobName: run.jobName,
      agent: run.agent.name,
      model: run.model,
      environment: run.backend.kind,
      concurrency: run.concurrency,
      startedAt,
      notStarted,
      stopped: notStarted > 0 ? (spec.breaker?.stopped ?? null) : null,
    });
    if (!spec.signal.aborted)
      await writeJsonAtomic(path.join(job.dir, SUMMARY), summary, { durable: true, floats: SUMMARY_FLOATS });
    return { jobDir: job.dir, repeat: job.repeat, summary, results: ordered };
  } finally {
    await lock.release();
  }
}

interface Pending {
  jobTask: JobTask;
  /** Its attempts no marker replaced yet: the next attempt replaces them. */
  previous: Rollout[];
}

/** Resume: each task's final attempt kept when it stands, else the task runs again. */
async function whatIsLeft(
  spec: JobSpec,
): Promise<{ results: Map<string, RolloutResult>; pending: Pending[] }> {
  const existing = await scanAttempts(spec.job.dir);
  const results = new Map<string, RolloutResult>();
  const pending: Pending[] = [];
  for (const jobTask of spec.run.tasks) {
    const attempts = existing.get(jobTask.task.name) ?? [];
    const final = finalAttempt(attempts);
    const kept = final && !needsRun(final) ? (await readResult(final.dir)).result : null;
    if (kept) results.set(jobTask.task.name, kept);
    else pending.push({ jobTask, previous: attempts.filter((a) => !a.replaced?.marker) });
  }
  return { results, pending };
}

/** The pending rollouts, -j at a time under the run's gate; returns how many never started. */
async function runPending(
  spec: JobSpec,
  pending: Pending[],
  results: Map<string, RolloutResult>,
): Promise<number> {
  const cleanups: Promise<void>[] = [];
  const withCleanup: JobSpec = { ...spec, deferCleanup: (work) => cleanups.push(work) };
  const { concurrency } = spec.run;
  let notStarted = 0;
  try {
    const gate = spec.rolloutGate ?? new Limiter(concurrency);
    await mapLimit(pending, concurrency, ({ jobTask, previous }) =>
      // Checked once a slot is free: the run may have stopped while this rollout waited for one.
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
  return notStarted;
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
    // A task that cannot run as written fails the same way in every rollout: say it once, with the fix.
    if (result.error_category === "task_error") spec.warn(`task ${jobTask.task.name}: ${result.error}`);
    const retryable = isRetryable(result.error_category, result.attribution);
    const stopped = spec.signal.aborted || spec.breaker?.signal.aborted === true;
    if (!retryable || retry >= spec.run.retryAttempts || stopped) {
      spec.onRolloutEnd?.(result);
      return result;
    }
    const next = newRolloutName(jobTask.task.name);
    await markReplaced(path.join(spec.job.dir, rolloutName), next, "retried");
    spec.warn(
      `${spec.job.repeat} ${rolloutName}: ${result.error_category} (${result.error}); retrying as ${next}`,
    );
    await sleep(spec.run.retryBackoffMs * 2 ** retry);
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
  const hooks = await spec.prepareRollout?.(ids.rolloutName, path.join(spec.job.dir, ids.rolloutName));
  const plan: RolloutPlan = {
    run: spec.run,
    job: spec.job,
    task: jobTask.task,
    taskDigest: jobTask.digest,
    ...ids,
    signal: spec.signal,
    warn: spec.warn,
    deferCleanup: spec.deferCleanup,
    onPhase: (phase) =>
      spec.onRolloutPhase?.({ task: jobTask.task.name, rolloutName: ids.rolloutName, phase }),
    hooks,
    ...(spec.controls ? { controls: spec.controls } : {}),
  };
  return (spec.startRollout ?? runRollout)(plan);
}
