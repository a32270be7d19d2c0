// What `bench train convert --format branch-tree` writes: child rows and pair rows (upstream's
// newer branch-tree fields). Types come from these schemas. Not yet in TRAIN_SCHEMAS: the lead
// registers them ("train-branch-child-row.schema.json", "train-branch-pair-row.schema.json") and
// regenerates schemas/*.json after merging.
import { z } from "zod";
import { ChatMessage, ToolDef } from "./train-rows.js";

const Messages = z.array(ChatMessage);

export const BranchChildRow = z
  .object({
    kind: z.literal("branch_child"),
    schema_version: z.literal(2),
    prefix: Messages.describe("the messages every rollout below the fork shares"),
    continuation: Messages.min(1).describe("this rollout's own messages after the prefix"),
    messages: Messages.describe("prefix followed by continuation"),
    tools: z.array(ToolDef),
    label: z.string().describe("the rollout's name"),
    request: z.number().int().describe("the 0-based model call the continuation starts at"),
    status: z.enum(["passed", "failed", "errored", "verifier_errored"]).nullable(),
    reward: z.number(),
    value: z.number().describe("mean reward of the rollouts below the fork"),
    value_stderr: z.number().describe("sample std (ddof 1) of those rewards / sqrt(n)"),
    advantage: z.number().describe("reward - value"),
    agent: z.string().nullable(),
    model: z.string().nullable(),
    depth: z.number().int().describe("forks above this one"),
    fork_id: z.string(),
    fork_kind: z.literal("fork"),
    parent_node: z.string().nullable().describe("fork_id of the fork above; null at the top"),
    session: z.string().describe("the rollout folder"),
    prefix_complete: z.boolean(),
    prefix_source: z.literal("llm_trajectory"),
    tool_names: z.array(z.string()).describe("the tools the continuation calls, in order of first call"),
    task_name: z.string(),
    job: z.string(),
    group: z.string().describe("key=value pairs of --group-by, joined by |"),
    source_path: z.string(),
  })
  .strict()
  .meta({ title: "benchflow branch-tree child row" });
export type BranchChildRow = z.infer<typeof BranchChildRow>;

export const BranchPairRow = z
  .object({
    kind: z.literal("branch_pair"),
    schema_version: z.literal(2),
    prompt: Messages.describe("the shared prefix (the chosen rollout's copy)"),
    chosen: Messages.min(1),
    rejected: Messages.min(1),
    tools: z.array(ToolDef),
    chosen_reward: z.number(),
    rejected_reward: z.number(),
    margin: z.number().describe("chosen_reward - rejected_reward, above 0"),
    same_request: z.boolean().describe("both continuations start with a model reply to the prompt"),
    value: z.number(),
    depth: z.number().int(),
    fork_id: z.string(),
    task_name: z.string(),
    group: z.string(),
    chosen_session: z.string(),
    rejected_session: z.string(),
  })
  .strict()
  .meta({ title: "benchflow branch-tree pair row" });
export type BranchPairRow = z.infer<typeof BranchPairRow>;
