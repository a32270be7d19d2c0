// Writes schemas/*.json from the zod schemas (the same source as the types). A test checks that the
// committed files equal what this prints, so run it after changing a schema:
//   node --import tsx scripts/gen-schemas.ts
import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { schemaText, TRAIN_SCHEMAS } from "../src/schemas/json-schemas.js";
import {
  WrittenEvaluationLock,
  WrittenEvaluationPlan,
  WrittenJobSummary,
  WrittenReplacedMarker,
  WrittenRolloutResult,
  WrittenTiming,
} from "../src/schemas/result.js";
import { RolloutPrompts, WrittenRolloutConfig } from "../src/schemas/rollout-config.js";
import { AgentEvent, TokenCaptureBlock, TrajectoryLine } from "../src/schemas/trajectory.js";

export const SCHEMAS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "schemas");

/**
 * File name -> file text. Each describes the file as we write it (the `Written` schemas): unknown
 * keys refused in our own objects, bodies recorded from the wire left open. Readers accept more
 * (src/schemas/result.ts keeps the lenient forms for job folders written by upstream BenchFlow).
 */
export function renderSchemas(): Record<string, string> {
  const out: Record<string, string> = {
    "trial-result.schema.json": schemaText(WrittenRolloutResult),
    "trial-config.schema.json": schemaText(WrittenRolloutConfig),
    "trial-timing.schema.json": schemaText(WrittenTiming),
    "trial-prompts.schema.json": schemaText(RolloutPrompts),
    "trajectory-line.schema.json": schemaText(TrajectoryLine),
    "token-capture.schema.json": schemaText(TokenCaptureBlock),
    "agent-event.schema.json": schemaText(AgentEvent),
    "evaluation-plan.schema.json": schemaText(WrittenEvaluationPlan),
    "evaluation-lock.schema.json": schemaText(WrittenEvaluationLock),
    "job-summary.schema.json": schemaText(WrittenJobSummary),
    "replaced-marker.schema.json": schemaText(WrittenReplacedMarker),
  };
  for (const [name, schema] of Object.entries(TRAIN_SCHEMAS)) out[name] = schemaText(schema);
  return out;
}

async function main(): Promise<void> {
  await fs.mkdir(SCHEMAS_DIR, { recursive: true });
  for (const [name, text] of Object.entries(renderSchemas())) {
    await fs.writeFile(path.join(SCHEMAS_DIR, name), text);
    process.stdout.write(`wrote schemas/${name}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
