// `<work-dir>/train-run.json`, written by `bench train run sft`: upstream's run manifest
// (training/run_manifest.py), so a tool that reads upstream's train runs reads ours. Not yet in
// TRAIN_SCHEMAS: the lead registers it ("train-run.schema.json") and regenerates after merging.
import { z } from "zod";

export const RunStatus = z.enum(["pending", "running", "succeeded", "failed"]);
export type RunStatus = z.infer<typeof RunStatus>;

export const CommandRecord = z
  .object({
    id: z.string(),
    argv: z.array(z.string()),
    cwd: z.string(),
    env_keys: z.array(z.string()).describe("names of the credential variables that were set; never values"),
  })
  .strict();
export type CommandRecord = z.infer<typeof CommandRecord>;

export const TrainComponent = z
  .object({
    name: z.string(),
    role: z.enum(["primary", "service"]),
    command_id: z.string(),
    status: RunStatus,
    logs: z.array(z.string()).describe("relative to work_dir"),
    metrics: z.array(z.string()),
    checkpoints: z.array(z.string()),
    extra: z.record(z.string(), z.unknown()).describe("returncode when the command failed"),
  })
  .strict();
export type TrainComponent = z.infer<typeof TrainComponent>;

export const TrainRunManifest = z
  .object({
    schema_version: z.literal(1),
    run_type: z.literal("sft"),
    backend: z.literal("prime-rl"),
    config: z.string(),
    work_dir: z.string(),
    output_dir: z.string(),
    dry_run: z.boolean(),
    created_at: z.string().describe("UTC, whole seconds, +00:00"),
    updated_at: z.string(),
    overall_status: RunStatus,
    commands: z.array(CommandRecord),
    components: z.array(TrainComponent),
    artifacts: z.object({ checkpoints: z.array(z.string()), exported_models: z.array(z.string()) }).strict(),
    extra: z
      .record(z.string(), z.unknown())
      .describe("prime_rl_sft_exposure_plan, prime_rl_sft_dataset (upstream's field names)"),
  })
  .strict()
  .meta({ title: "benchflow train run manifest" });
export type TrainRunManifest = z.infer<typeof TrainRunManifest>;
