// The library: the same engine as the `bench` command, from code.

export { registerAgent } from "./agents/registry.js";
export type { Agent, AgentContext, AgentRunResult, TrajectoryEvent } from "./agents/types.js";
export { CategorizedError, UserInputError } from "./errors.js";
export type { EvaluationEvent, EvaluationResult } from "./job/evaluation.js";
export { Evaluation } from "./job/evaluation.js";
export type { JobCounts, LoadedJob, LoadedTrial, LoadJobOptions } from "./job/load-job.js";
export { loadJob } from "./job/load-job.js";
export type { EvaluationSettings, PlannedEvaluation } from "./job/plan.js";
export type { JobOutcome } from "./job/run-job.js";
export type { JobFolder, RolloutFolder, RolloutOutcome } from "./jobs-dir/index.js";
export { deriveOutcome, readJobs, readRolloutFolder, readTrialConfig } from "./jobs-dir/index.js";
export type { ExecOptions, ExecResult, Sandbox, SandboxBackend } from "./sandbox/types.js";
export * from "./schemas/outcome.js";
export type {
  AgentResult,
  EvaluationPlan,
  JobSummary,
  RolloutResult as TrialResult,
  TimingInfo,
} from "./schemas/result.js";
export type { PolicyRecord, RolloutConfig as TrialConfig } from "./schemas/rollout-config.js";
export { taskDigest } from "./task/digest.js";
export { loadTask } from "./task/load.js";
export type { Task, TaskConfig } from "./task/types.js";
export type { ConvertOptions, ConvertResult, StreamEnd, StreamOptions } from "./train/index.js";
export {
  convertJob,
  JobProcessGone,
  RunStopped,
  StreamTimeout,
  scanRollouts,
  streamRollouts,
  tokenReport,
  validateFile,
  validateRows,
} from "./train/index.js";
// issue 15: see a run (`bench view`, `bench results`)
export type {
  GroupLine,
  JobLine,
  MemberLine,
  RunSummary,
  ViewServer,
  ViewServerOptions,
} from "./view/index.js";
export { loadRunSummary, startViewServer } from "./view/index.js";
