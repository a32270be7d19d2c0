// The library: the same engine as the `bench` command, from code.
export { Evaluation } from "./job/evaluation.js";
export type { EvaluationEvent, EvaluationResult } from "./job/evaluation.js";
export type { EvaluationSettings, PlannedEvaluation } from "./job/plan.js";
export type { JobOutcome } from "./job/run-job.js";
export { loadJob } from "./job/load-job.js";
export type { LoadedJob, LoadedTrial } from "./job/load-job.js";
export { loadTask } from "./task/load.js";
export { taskDigest } from "./task/digest.js";
export type { Task, TaskConfig } from "./task/types.js";
export type { Sandbox, SandboxBackend, ExecOptions, ExecResult } from "./sandbox/types.js";
export type { Agent, AgentContext, AgentRunResult, TrajectoryEvent } from "./agents/types.js";
export { registerAgent } from "./agents/registry.js";
export * from "./schemas/outcome.js";
export type { TrialResult, JobSummary, EvaluationPlan, TimingInfo, AgentResult } from "./schemas/result.js";
export { CategorizedError, UserInputError } from "./errors.js";
