// The JSON Schemas we publish for what the train side writes, generated from the zod schemas the
// types come from (scripts/gen-schemas.ts writes them to schemas/).

import { z } from "zod";
import { StreamRecord, TokenCaptureSummary } from "./rollout-stream.js";
import { BranchChildRow, BranchPairRow } from "./train-branch-tree.js";
import { Manifest } from "./train-manifest.js";
import { GroupBlock, PrimeSftRow, TokensRow, TrlSftRow } from "./train-rows.js";
import { TrainRunManifest } from "./train-run.js";

export const TRAIN_SCHEMAS: Record<string, z.ZodType> = {
  "train-group-block.schema.json": GroupBlock,
  "train-prime-sft-row.schema.json": PrimeSftRow,
  "train-trl-sft-row.schema.json": TrlSftRow,
  "train-tokens-row.schema.json": TokensRow,
  "train-manifest.schema.json": Manifest,
  "rollout-stream.schema.json": StreamRecord,
  "token-capture-summary.schema.json": TokenCaptureSummary,
  "train-branch-child-row.schema.json": BranchChildRow,
  "train-branch-pair-row.schema.json": BranchPairRow,
  "train-run.schema.json": TrainRunManifest,
};

export function schemaText(schema: z.ZodType, io: "input" | "output" = "output"): string {
  // zod marks every integer with the safe-integer bounds; they say nothing to a reader.
  const noSafeBounds = (key: string, value: unknown) =>
    (key === "minimum" || key === "maximum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER
      ? undefined
      : value;
  return `${JSON.stringify(z.toJSONSchema(schema, { io }), noSafeBounds, 2)}\n`;
}
