// See a run: `bench view` (a local web app over a jobs folder) and `bench results` (the same numbers
// in the terminal). Reads the folder through src/jobs-dir and train's facts, groups and advantages.
export { type ArmBy, armsOf } from "./model/arms.js";
export { groupByFor, groupsOf, type ViewGroup } from "./model/groups.js";
export { type RolloutDetail, readRolloutDetail } from "./model/rollout-detail.js";
export { RunIndex } from "./model/run-index.js";
export {
  type GroupLine,
  type JobLine,
  loadRunSummary,
  type MemberLine,
  type RunSummary,
  summaryFromIndex,
} from "./model/run-summary.js";
export type { Category } from "./model/summary.js";
export { isLoopback, startViewServer, type ViewServer, type ViewServerOptions } from "./server.js";
