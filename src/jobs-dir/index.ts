// The one reader of the jobs directory. The run side (resume, loadJob) and the train side (convert,
// stream, validate's inputs) both read through it; later readers (other layouts, a viewer) extend it.
//   layout      file names and folder patterns
//   discover    job folders and rollout folders under a path
//   rollout     one rollout folder: result, marker, trial key, attempt facts, outcome
//   infer       the train side's filling of what upstream's result.json leaves out
//   outcome     the outcome fields, derived one way
//   attempts    the one final-attempt rule
//   job-files   plan, summary (not_started, stopped), lock, job state
//   read        a job folder read whole; a job's identity (JobInfo: id, plan) for the train side
//   config      a rollout's config.json (older camelCase policy keys read as today's)
//   exchange    one recorded model call: a line of trajectory/llm_trajectory.jsonl, read through guards
export {
  type AttemptFacts,
  compareAttempts,
  finalAttempt,
  olderFirst,
  rolloutKeyOf as trialKeyOf,
  supersededIn,
} from "./attempts.js";
export { readRolloutConfig as readTrialConfig } from "./config.js";
export {
  discoverJobs,
  type FoundJob,
  isJobFolder,
  jobIds,
  looksLikeRollout,
  rolloutDirsIn,
} from "./discover.js";
export {
  callPurposeOf,
  type Exchange,
  isSuccessful,
  policyVersionOf,
  policyVersions,
  readExchanges,
  requestBody,
  responseBody,
  statusOf,
  toExchange,
  tokenCaptureOf,
  type Wire,
  wireOf,
} from "./exchange.js";
export { type Inferred, inferResult, parsePythonJson } from "./infer.js";
export {
  type JobState,
  jobState,
  type RunStop,
  readLock,
  readPlan,
  readSummary,
  type SummaryFacts,
} from "./job-files.js";
export * from "./layout.js";
export { deriveOutcome, type RolloutOutcome, rewardOf } from "./outcome.js";
export {
  finalRollouts,
  type JobFolder,
  type JobInfo,
  readJobFolder,
  readJobInfo,
  readJobInfos,
  readJobs,
} from "./read.js";
export {
  type Replaced,
  type ResultState,
  type RolloutFolder,
  readObject,
  readResult,
  readRolloutFolder,
} from "./rollout.js";
