// The training-data library: the same code paths as `bench train convert | stream | validate`.
// One folder per step; the jobs directory itself, its rollouts, their groups and advantages and a
// recorded call as a conversation are the read side's (src/jobs-dir), shared with the viewer.
//   signal/     reward vectors and their advantages (--reward-vector)
//   tokens/     token sequences from captured token ids
//   convert/    rows and the manifest (`bench train convert`); inputs/: its other sources, a
//               results.jsonl or an existing trainer JSONL
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
