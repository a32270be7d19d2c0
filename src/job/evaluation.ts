// An Evaluation runs `trials` jobs over a set of tasks (each repeat a job of its own, so a group of N
// rollouts of a task exists for group advantages), `parallelJobs` of them at once (default one after
// another); within a job, `concurrency` trials run at once, and every trial of the run passes one
// gate of `maxConcurrentTrials`. The CLI's `bench run` is a thin shell around this class.
import path from "node:path";
import type { Agent } from "../agents/types.js";
import { UserInputError } from "../errors.js";
import { PLAN, SUMMARY } from "../jobs-dir/layout.js";
import { opt } from "../options.js";
import type { SandboxBackend } from "../sandbox/types.js";
import { isUnscoredFailure } from "../schemas/outcome.js";
import type { RolloutResult } from "../schemas/result.js";
import { writeJsonAtomic } from "../util/fs.js";
import { Limiter, mapLimit } from "../util/limit.js";
import { RunBreaker, type Stopped } from "./breaker.js";
import { openModelAccess } from "./model-access.js";
import { type EvaluationSettings, type PlannedEvaluation, planEvaluation, prepareJobsDir } from "./plan.js";
import { type JobOutcome, runJob } from "./run-job.js";
import { openSlurm } from "./slurm/open.js";
import { SUMMARY_FLOATS, summarize } from "./summary.js";

export type EvaluationEvent =
  | { type: "plan"; plan: PlannedEvaluation }
  | { type: "warning"; message: string }
  | { type: "job-start"; repeat: string; jobDir: string; tasks: number }
  | { type: "rollout-start"; repeat: string; task: string; rolloutName: string }
  | { type: "rollout-end"; repeat: string; result: RolloutResult }
  | { type: "job-end"; outcome: JobOutcome }
  | { type: "stopped"; stopped: Stopped; notStarted: number; jobName: string };

export interface EvaluationResult {
  jobs: JobOutcome[];
  /** The final attempt of every (job, task), in run order. */
  results: RolloutResult[];
  /**
   * 0: every trial finished (scored, or failed by the policy); 1: an infrastructure or verifier
   * error, or the run stopped because the endpoint kept failing; 2: the endpoint refused the
   * user's configuration (config_error).
   */
  exitCode: 0 | 1 | 2;
  interrupted: boolean;
  /** Why the run stopped starting trials, when it did (the rest resume with the same job name). */
  stopped: Stopped | null;
  /** Planned trials that never started because the run stopped. */
  notStarted: number;
  elapsedSec: number;
}

/** Trials that can run at once in the whole run: -j per job, jobs at once, under the run's bound. */
function rolloutsAtOnce(plan: PlannedEvaluation): number {
  return Math.min(plan.concurrency * plan.parallelJobs, plan.maxConcurrentTrials);
}

/**
 * The breaker's limit: --fail-fast-rollouts, else max(3, trials at once) (one wave of concurrent
 * trials and more).
 */
function failFastRollouts(s: EvaluationSettings, concurrency: number): number {
  const v = s.failFastRollouts ?? Math.max(3, concurrency);
  if (!Number.isInteger(v) || v < 1)
    throw new UserInputError(`${opt("failFastRollouts")} must be an integer >= 1; got ${s.failFastRollouts}`);
  return v;
}

/**
 * A job the run never started: its summary.json says so (total 0, every task not started, why), so
 * a reader or a streaming trainer sees the run ended rather than waits for it.
 */
async function recordNotStarted(jobDir: string, plan: PlannedEvaluation, stopped: Stopped): Promise<number> {
  const summary = summarize([], {
    jobName: plan.jobName,
    agent: plan.agent.name,
    model: plan.model,
    environment: plan.backend.kind,
    concurrency: plan.concurrency,
    startedAt: new Date(),
    notStarted: plan.tasks.length,
    stopped,
  });
  await writeJsonAtomic(path.join(jobDir, SUMMARY), summary, { durable: true, floats: SUMMARY_FLOATS });
  return plan.tasks.length;
}

export class Evaluation {
  readonly settings: EvaluationSettings;
  private planned: PlannedEvaluation | null = null;

  constructor(settings: EvaluationSettings) {
    this.settings = settings;
  }

  /** Validate the settings, load the tasks and decide the job folders; writes nothing. */
  async plan(): Promise<PlannedEvaluation> {
    if (!this.planned) {
      const planned = await planEvaluation(this.settings);
      failFastRollouts(this.settings, rolloutsAtOnce(planned));
      this.planned = planned;
    }
    return this.planned;
  }

  async run(): Promise<EvaluationResult> {
    const t0 = Date.now();
    const plan = await this.plan();
    await prepareJobsDir(plan);
    const emit = (e: EvaluationEvent) => this.settings.onEvent?.(e);
    const warned = new Set<string>();
    const warn = (message: string) => {
      if (warned.has(message)) return;
      warned.add(message);
      emit({ type: "warning", message });
    };
    for (const w of plan.warnings) warn(w);
    for (const note of (await plan.backend.reap?.()) ?? []) warn(note);
    const slurm =
      this.settings.executor?.kind === "slurm" ? await openSlurm(plan, this.settings.executor, warn) : null;
    emit({ type: "plan", plan });
    // The plan of every job is on disk before the first starts: a streaming trainer knows what to wait for.
    for (const job of plan.jobs)
      await writeJsonAtomic(path.join(job.jobDir, PLAN), job.plan, { durable: true });
    const signal = this.settings.signal ?? new AbortController().signal;
    const breaker = new RunBreaker(
      failFastRollouts(this.settings, rolloutsAtOnce(plan)),
      plan.policy?.gateway.upstream.baseUrl ?? null,
    );
    // One gate for every trial of the run: K jobs at once must not start K x J trials on one machine.
    const trialGate = new Limiter(plan.maxConcurrentTrials);
    const outcomes: Array<JobOutcome | undefined> = [];
    let notStarted = 0;
    const indexed = plan.jobs.map((job, index) => ({ job, index }));
    const jobsDone = mapLimit(indexed, plan.parallelJobs, async ({ job, index }) => {
      if (signal.aborted) return;
      if (breaker.stopped) {
        notStarted += await recordNotStarted(job.jobDir, plan, breaker.stopped);
        return;
      }
      emit({ type: "job-start", repeat: job.repeat, jobDir: job.jobDir, tasks: plan.tasks.length });
      // One gateway per job: a policy that changes between jobs is told apart by its job.
      const policy = slurm && plan.policy ? slurm.policyFor(plan.policy) : plan.policy;
      const access =
        policy && plan.model ? await openModelAccess(policy, plan.model, job.plan.trial_index) : null;
      const prepareTrial = access?.prepareTrial ?? this.settings.prepareRollout;
      let outcome: JobOutcome;
      try {
        outcome = await runJob({
          jobDir: job.jobDir,
          jobName: plan.jobName,
          repeatLabel: job.repeat,
          tasks: plan.tasks,
          agent: plan.agent as Agent,
          model: plan.model,
          backend: plan.backend as SandboxBackend,
          concurrency: plan.concurrency,
          rolloutGate: trialGate,
          retryAttempts: plan.retryAttempts,
          agentEnv: plan.agentEnv,
          settings: plan.trialSettings,
          signal,
          warn,
          prepareRollout: prepareTrial,
          retryBackoffMs: this.settings.retryBackoffMs,
          breaker,
          ...(slurm ? { startRollout: slurm.startTrial } : {}),
          onRolloutStart: (info) => emit({ type: "rollout-start", repeat: job.repeat, ...info }),
          onRolloutEnd: (result) => emit({ type: "rollout-end", repeat: job.repeat, result }),
        });
      } finally {
        await access?.close();
      }
      outcomes[index] = outcome;
      notStarted += outcome.summary.not_started;
      emit({ type: "job-end", outcome });
    });
    // With --executor slurm, the run (not each job) waits for its SLURM jobs to end on their nodes.
    await (slurm ? jobsDone.finally(() => slurm.settle()) : jobsDone);
    // In plan order, whichever finished first.
    const jobs = outcomes.filter((o): o is JobOutcome => o !== undefined);
    const stopped = breaker.stopped;
    if (stopped) emit({ type: "stopped", stopped, notStarted, jobName: plan.jobName });
    const results = jobs.flatMap((j) => j.results);
    const failed = results.some(
      (r) => isUnscoredFailure(r.error_category) || r.verifier_error_category !== null,
    );
    const missing = jobs.length < plan.jobs.length || results.length < plan.jobs.length * plan.tasks.length;
    return {
      jobs,
      results,
      exitCode: stopped?.reason === "config_error" ? 2 : failed || missing || stopped ? 1 : 0,
      interrupted: signal.aborted,
      stopped,
      notStarted,
      elapsedSec: (Date.now() - t0) / 1000,
    };
  }
}
