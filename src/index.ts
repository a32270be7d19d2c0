// The library: the same engine as the `bench` command, from code. Its options are the command's flags
// in camelCase; its errors name those options (the command's name its flags).

export { registerAgent } from "./agents/registry.js";
export type { Agent, AgentContext, AgentRunResult, TrajectoryEvent } from "./agents/types.js";
export { CategorizedError, UserInputError } from "./errors.js";
export type { EvaluationEvent, EvaluationResult } from "./job/evaluation.js";
export { Evaluation } from "./job/evaluation.js";
export type { EvaluationSettings, PlannedEvaluation } from "./job/plan.js";
export type { JobOutcome } from "./job/run-job.js";
// The read side: one Rollout record, read one way by every reader; groups and their advantages.
export {
  baselineOf,
  EPS,
  FORMULAS,
  NORMALISATIONS,
  type Normalisation,
} from "./jobs-dir/groups/advantage.js";
export type { GroupKey, Member, Settled } from "./jobs-dir/groups/groups.js";
export { groupKeyOf, memberWithheld, parseGroupBy, settleGroup } from "./jobs-dir/groups/groups.js";
export type {
  CallFacts,
  Job,
  JobCounts,
  JobRollouts,
  JobsScan,
  LoadedJob,
  LoadJobOptions,
  Outcome,
  Replaced,
  ResultState,
  Rollout,
} from "./jobs-dir/index.js";
export {
  loadJob,
  outcomeOfResult,
  readResult,
  readRolloutConfig,
  scanJobs,
  scanRollouts,
  settleAttempts,
  withCalls,
} from "./jobs-dir/index.js";
export type { ExecOptions, ExecResult, Sandbox, SandboxBackend } from "./sandbox/types.js";
export * from "./schemas/outcome.js";
export type {
  AgentResult,
  EvaluationPlan,
  JobSummary,
  RolloutExecutor,
  RolloutResult,
  TimingInfo,
} from "./schemas/result.js";
export type { PolicyRecord, RolloutConfig } from "./schemas/rollout-config.js";
export { taskDigest } from "./task/digest.js";
export { loadTask } from "./task/load.js";
export type { Task, TaskConfig } from "./task/types.js";
export type { ConvertOptions, ConvertResult, StreamEnd, StreamOptions } from "./train/index.js";
export {
  convertJob,
  JobProcessGone,
  RunStopped,
  StreamTimeout,
  streamRollouts,
  tokenReport,
  validateFile,
  validateRows,
} from "./train/index.js";
// See a run (`bench view`, `bench results`)
export type {
  GroupLine,
  JobLine,
  MemberLine,
  RunSummary,
  ViewServer,
  ViewServerOptions,
} from "./view/index.js";
export { loadRunSummary, startViewServer } from "./view/index.js";
