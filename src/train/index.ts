// The training-data library: the same code paths as `bench train convert | stream | validate`.
export { baselineOf, EPS, FORMULAS, NORMALISATIONS, type Normalisation } from "./advantage.js";
export { convertLines, textLine } from "./console.js";
export { convertJob } from "./convert.js";
export type { ConvertOptions, ConvertResult, GroupTotals } from "./convert-types.js";
export { JobProcessGone, RunStopped, StreamTimeout } from "./errors.js";
export type { GroupKey, MemberState, Settled } from "./groups.js";
export { groupBlock, groupKeyOf, memberWithheld, parseGroupBy, settleGroup } from "./groups.js";
export type { RolloutFacts } from "./rollout.js";
export { type Scan, scanRollouts } from "./scan.js";
export * from "./schema.js";
export * from "./schema-manifest.js";
export * from "./schema-stream.js";
export { type StreamOptions, streamRollouts } from "./stream.js";
export type { StreamEnd } from "./stream-end.js";
export { type TokenReport, tokenReport } from "./tokens.js";
export {
  checkRow,
  ROW_FORMATS,
  type RowFormat,
  type ValidateOptions,
  type ValidationReport,
  validateFile,
  validateRows,
} from "./validate.js";
