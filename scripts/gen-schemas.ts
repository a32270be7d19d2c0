// Writes schemas/*.json from the zod schemas (the same source as the types). A test checks that the
// committed files equal what this prints, so run it after changing a schema:
//   node --import tsx scripts/gen-schemas.ts
import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { schemaText, TRAIN_SCHEMAS } from "../src/schemas/json-schemas.js";
import {
  EvaluationLock,
  EvaluationPlan,
  JobSummary,
  ReplacedMarker,
  TrialResult,
} from "../src/schemas/result.js";

export const SCHEMAS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "schemas");

/** File name -> file text. Files we read are described as readers accept them (defaults optional). */
export function renderSchemas(): Record<string, string> {
  const out: Record<string, string> = {
    "trial-result.schema.json": schemaText(TrialResult, "input"),
    "evaluation-plan.schema.json": schemaText(EvaluationPlan, "input"),
    "evaluation-lock.schema.json": schemaText(EvaluationLock, "input"),
    "job-summary.schema.json": schemaText(JobSummary, "input"),
    "replaced-marker.schema.json": schemaText(ReplacedMarker, "input"),
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
