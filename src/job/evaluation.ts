// An Evaluation runs `trials` jobs over a set of tasks (each repeat a job of its own, so a group of N
// rollouts of a task exists for group advantages), `parallelJobs` of them at once (default one after
// another); within a job, `concurrency` rollouts run at once, and every rollout of the run passes one
// gate of `maxConcurrentTrials`. The CLI's `bench run` is a thin shell around this class.
import path from "node:path";
import { endpointPolicyOf } from "../gateway/index.js";
import { PLAN, SUMMARY } from "../jobs-dir/layout.js";
import { controlsJudge, controlsWarning } from "../rollout/controls.js";
import type { ControlsJudge } from "../rollout/types.js";
import { isUnscoredFailure } from "../schemas/outcome.js";
import type { RolloutResult } from "../schemas/result.js";
import { writeJsonAtomic } from "../util/fs.js";
import { Limiter, mapLimit } from "../util/limit.js";
import { RunBreaker, type Stopped } from "./breaker.js";
import { openModelAccess } from "./model-access.js";
import {
  type EvaluationEvent,
  type EvaluationSettings,
  type PlannedEvaluation,
  type PlannedJob,
  planEvaluation,
  prepareJobsDir,
} from "./plan.js";
import type { ResolvedPolicy } from "./policy.js";
import { type JobOutcome, runJob } from "./run-job.js";
import { type OpenSlurm, openSlurm } from "./slurm/open.js";
import { SUMMARY_FLOATS, summarize } from "./summary.js";

export type { EvaluationEvent } from "./plan.js";

export interface EvaluationResult {
  jobs: JobOutcome[];
  /** The final attempt of every (job, task), in run order. */
  results: RolloutResult[];
  /**
   * 0: every rollout finished (scored, or failed by the policy); 1: an infrastructure or verifier
   * error, or the run stopped because the endpoint kept failing; 2: the endpoint refused the
   * user's configuration (config_error).
   */
  exitCode: 0 | 1 | 2;
  interrupted: boolean;
  /** Why the run stopped starting rollouts, when it did (the rest resume with the same job name). */
  stopped: Stopped | null;
  /** Planned rollouts that never started because the run stopped. */
  notStarted: number;
  elapsedSec: number;
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

/** What the run lends each of its jobs: the stop signal, one gate, one breaker, the warnings. */
interface RunShared {
  plan: PlannedEvaluation;
  signal: AbortSignal;
  gate: Limiter;
  breaker: RunBreaker;
  slurm: OpenSlurm | null;
  controls: ControlsJudge;
  warn(message: string): void;
  emit(e: EvaluationEvent): void;
}

export class Evaluation {
  readonly settings: EvaluationSettings;
  private planned: PlannedEvaluation | null = null;

  constructor(settings: EvaluationSettings) {
    this.settings = settings;
  }

  /** Validate the settings, load the tasks and decide the job folders; writes nothing. */
  async plan(): Promise<PlannedEvaluation> {
    this.planned ??= await planEvaluation(this.settings);
    return this.planned;
  }

  async run(): Promise<EvaluationResult> {
    const t0 = Date.now();
    const shared = await this.start();
    const { plan, signal, breaker } = shared;
    const outcomes: Array<JobOutcome | undefined> = [];
    let notStarted = 0;
    const indexed = plan.jobs.map((job, index) => ({ job, index }));
    const jobsDone = mapLimit(indexed, plan.parallelJobs, async ({ job, index }) => {
      if (signal.aborted) return;
      if (breaker.stopped) {
        notStarted += await recordNotStarted(job.dir, plan, breaker.stopped);
        return;
      }
      const outcome = await this.runOneJob(shared, job);
      outcomes[index] = outcome;
      notStarted += outcome.summary.not_started;
      shared.emit({ type: "job-end", outcome });
    });
    // With --executor slurm, the run (not each job) waits for its SLURM jobs to end on their nodes.
    const slurm = shared.slurm;
    await (slurm ? jobsDone.finally(() => slurm.settle()) : jobsDone);
    // In plan order, whichever finished first.
    const jobs = outcomes.filter((o): o is JobOutcome => o !== undefined);
    const stopped = breaker.stopped;
    if (stopped) shared.emit({ type: "stopped", stopped, notStarted, jobName: plan.jobName });
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

  /** Before the first job: the folders made, the warnings said, SLURM opened, every job's plan on disk. */
  private async start(): Promise<RunShared> {
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
    const slurm = plan.executor.kind === "slurm" ? await openSlurm(plan, plan.executor, warn) : null;
    emit({ type: "plan", plan });
    // The plan of every job is on disk before the first starts: a streaming trainer knows what to wait for.
    for (const job of plan.jobs) await writeJsonAtomic(path.join(job.dir, PLAN), job.plan, { durable: true });
    return {
      plan,
      signal: this.settings.signal ?? new AbortController().signal,
      // One gate for every rollout of the run: K jobs at once must not start K x J rollouts on one machine.
      gate: new Limiter(plan.maxConcurrentTrials),
      breaker: new RunBreaker(
        plan.failFastRollouts,
        plan.policy?.gateway.upstream.baseUrl ?? null,
        plan.maxCostUsd,
      ),
      slurm,
      controls: controlsJudge(plan.jobsDir, plan, (report) => {
        const words = controlsWarning(report);
        if (words) warn(words);
      }),
      warn,
      emit,
    };
  }

  /** One repeat job, with a gateway of its own: a policy that changes between jobs is told apart by its job. */
  private async runOneJob(shared: RunShared, job: PlannedJob): Promise<JobOutcome> {
    const { plan, slurm, emit } = shared;
    emit({ type: "job-start", repeat: job.repeat, jobDir: job.dir, tasks: plan.tasks.length });
    const policy = slurm && plan.policy ? slurm.policyFor(plan.policy) : plan.policy;
    const access =
      policy && plan.model
        ? await openModelAccess(shareOfEndpoint(policy, plan.parallelJobs), plan.model, job.plan.trial_index)
        : null;
    try {
      return await runJob({
        run: plan,
        job,
        signal: shared.signal,
        warn: shared.warn,
        rolloutGate: shared.gate,
        breaker: shared.breaker,
        controls: shared.controls,
        prepareRollout: access?.prepareRollout ?? this.settings.prepareRollout,
        ...(slurm ? { startRollout: slurm.startRollout } : {}),
        onRolloutStart: (info) => emit({ type: "rollout-start", repeat: job.repeat, ...info }),
        onRolloutPhase: (info) => emit({ type: "rollout-phase", repeat: job.repeat, ...info }),
        onRolloutEnd: (result) => emit({ type: "rollout-end", repeat: job.repeat, result }),
      });
    } finally {
      await access?.close();
    }
  }
}

/**
 * Each repeat job has a gateway of its own; with K of them at once, each gets 1/K of the run's bound
 * on calls to the endpoint, so the run as a whole keeps to it.
 */
function shareOfEndpoint(policy: ResolvedPolicy, jobsAtOnce: number): ResolvedPolicy {
  if (jobsAtOnce <= 1) return policy;
  const whole = endpointPolicyOf(policy.gateway).maxConnections;
  const share = Math.max(1, Math.floor(whole / jobsAtOnce));
  return {
    ...policy,
    gateway: { ...policy.gateway, endpoint: { ...policy.gateway.endpoint, maxConnections: share } },
  };
}
