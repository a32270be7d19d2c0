// The training-data library: the same code paths as `bench train convert | stream | validate`.
// One folder per step; the jobs directory itself is read by src/jobs-dir (the seam), not here.
//   rollouts/   the train side's facts of each rollout folder jobs-dir read, and one scan of a tree
//   groups/     group keys, settling a group, advantages (pure maths)
//   dialects/   a recorded call (any dialect) as chat messages and tools (the walks: src/dialects)
//   tokens/     token sequences from captured token ids
//   convert/    rows and the manifest (`bench train convert`)
//   inputs/     convert's other sources: a results.jsonl or an existing trainer JSONL
//   stream/     live rollout records (`bench train stream`) and how a stream ends
//   validate/   row checks (`bench train validate`)
//   testing/    test helpers (job and trajectory builders), not part of the library
// The files it writes (rows, manifest, stream record) have their schemas in src/schemas/.

export * from "../schemas/rollout-stream.js";
export * from "../schemas/train-manifest.js";
export * from "../schemas/train-rows.js";
export { convertLines, textLine } from "./console.js";
export { convertJob } from "./convert/convert.js";
export type { ConvertOptions, ConvertResult, GroupTotals } from "./convert/types.js";
export { baselineOf, EPS, FORMULAS, NORMALISATIONS, type Normalisation } from "./groups/advantage.js";
export type { GroupKey, MemberState, Settled } from "./groups/groups.js";
export { groupBlock, groupKeyOf, memberWithheld, parseGroupBy, settleGroup } from "./groups/groups.js";
export type { RolloutFacts } from "./rollouts/facts.js";
export { type Scan, scanRollouts } from "./rollouts/scan.js";
export type { StreamEnd } from "./stream/end.js";
export { JobProcessGone, RunStopped, StreamTimeout } from "./stream/errors.js";
export { type StreamOptions, streamRollouts } from "./stream/stream.js";
export { type TokenReport, tokenReport } from "./tokens/tokens.js";
export {
  checkRow,
  ROW_FORMATS,
  type RowFormat,
  type ValidateOptions,
  type ValidationReport,
  validateFile,
  validateRows,
} from "./validate/validate.js";
