// The read side of the jobs directory: the one model of what a run wrote, read one way by every
// reader (loadJob, resume, bench train convert | stream | validate, bench results, bench view).
//   layout       file names and folder patterns
//   discover     job folders and rollout folders under a path
//   job          a job folder as readers name it (Job: id, repeat, plan)
//   rollout      the Rollout record: one rollout folder, read once; its calls when a reader asks
//   result-file  result.json and replaced.json
//   outcome      how a rollout ended (Outcome), derived one way
//   attempts     the one final-attempt rule (settleAttempts)
//   scan         a tree read job by job (scanJobs, scanRollouts)
//   selection    the rollouts a canonical-selection.json selects, and a scan of only those
//   calls        what a rollout's model calls say (CallFacts)
//   load-job     loadJob: the library's reader
//   infer        filling what upstream's result.json leaves out
//   job-files    plan, summary (not_started, stopped), lock, job state
//   config       a rollout's config.json (older camelCase policy keys read as today's)
//   exchange     one recorded model call: a line of trajectory/llm_trajectory.jsonl
//   call-purpose what a call was for when its recorder did not say (exchange's callPurposeOf)
//   groups/      group keys, the seed's withholding rules, advantages (the trainer's and the viewer's)
//   conversation/ a recorded call, in any dialect, as chat messages with its tool calls
//   testing/     job and rollout folders written for tests (not exported)
export {
  type AttemptFields,
  compareAttempts,
  finalAttempt,
  olderFirst,
  replacedIn as supersededIn,
  rolloutKeyOf,
  settleAttempts,
} from "./attempts.js";
export { type CallFacts, callFactsOf } from "./calls.js";
export { readRolloutConfig } from "./config.js";
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
  originKindOf,
  policyVersionOf,
  policyVersions,
  readExchanges,
  requestBody,
  responseBody,
  statusOf,
  toExchange,
  tokenCaptureOf,
  trainingCalls,
  type Wire,
  wireOf,
} from "./exchange.js";
export { type Inferred, inferResult, parsePythonJson } from "./infer.js";
export { type Job, readJob, readJobs } from "./job.js";
export {
  type JobState,
  jobState,
  type PlanFacts,
  type RunStop,
  readLock,
  readPlan,
  readSummary,
  type SummaryFacts,
} from "./job-files.js";
export * from "./layout.js";
export { type JobCounts, type LoadedJob, type LoadJobOptions, loadJob } from "./load-job.js";
export { NO_OUTCOME, type Outcome, outcomeOfResult, rewardOf } from "./outcome.js";
export { type Replaced, type ResultState, readObject, readReplaced, readResult } from "./result-file.js";
export {
  attributionField,
  endedWithError,
  numericRewards,
  type ReadContext,
  type Rollout,
  readRollout,
  readRolloutExchanges,
  rewardsField,
  withCalls,
} from "./rollout.js";
export {
  assertFolder,
  assertRollouts,
  type JobRollouts,
  type JobsScan,
  type ScanOptions,
  scanFound,
  scanJobs,
  scanRollouts,
} from "./scan.js";
export {
  type CanonicalSelection,
  readCanonicalSelection,
  readSelectionList,
  restrictScan,
} from "./selection.js";
