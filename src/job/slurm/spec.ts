// The one file a SLURM job gets: everything `bench _trial` needs to run one planned trial on a node,
// written by the submitting host into the job folder's `.slurm/` (on the shared filesystem; readers
// of the jobs folder skip dot-folders). Functions cannot travel, so the gateway's hooks that are
// functions (usage, witness) stay on the host and are applied to result.json when the job ends.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ModelAccess } from "../../agents/types.js";
import type { RolloutPlan } from "../../rollout/types.js";
import type { PolicyEndpoint, SandboxKind } from "../../sandbox/types.js";

/** The plan's plain fields as they are; what is a function or an object there travels by name. */
type PlainFields =
  | "task"
  | "taskDigest"
  | "jobDir"
  | "jobName"
  | "repeatLabel"
  | "rolloutName"
  | "attempt"
  | "replaces"
  | "model"
  | "settings"
  | "agentEnv"
  | "verifierHardening";

export interface RolloutRunSpec extends Pick<RolloutPlan, PlainFields> {
  schema_version: 1;
  /** The agent by its registry name (resolved again on the node). */
  agent: string;
  /** Resolved on the submitting host (never `auto`), so one group never mixes sandboxes. */
  sandbox: SandboxKind;
  /** This trial's own gateway credential, at the address the nodes reach (--gateway-host). */
  modelAccess: ModelAccess | null;
  hostService: { port: number } | null;
  policyEndpoint: PolicyEndpoint | null;
}

export const SLURM_DIR = ".slurm";

export function specOf(plan: RolloutPlan): RolloutRunSpec {
  return {
    schema_version: 1,
    task: plan.task,
    taskDigest: plan.taskDigest,
    jobDir: plan.jobDir,
    jobName: plan.jobName,
    repeatLabel: plan.repeatLabel,
    rolloutName: plan.rolloutName,
    attempt: plan.attempt,
    replaces: plan.replaces,
    agent: plan.agent.name,
    model: plan.model,
    sandbox: plan.backend.kind,
    settings: plan.settings,
    agentEnv: plan.agentEnv,
    ...(plan.verifierHardening ? { verifierHardening: plan.verifierHardening } : {}),
    modelAccess: plan.hooks?.modelAccess ?? null,
    hostService: plan.hooks?.hostService ?? null,
    policyEndpoint: plan.hooks?.policyEndpoint ?? null,
  };
}

/** Written readable by its owner only: it holds the trial's gateway credential. */
export async function writeSpec(plan: RolloutPlan): Promise<string> {
  const dir = path.join(plan.jobDir, SLURM_DIR);
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${plan.rolloutName}.json`);
  const tmp = `${file}.tmp-${process.pid}`;
  await fs.writeFile(tmp, JSON.stringify(specOf(plan)), { mode: 0o600 });
  await fs.rename(tmp, file);
  return file;
}

export async function readSpec(file: string): Promise<RolloutRunSpec> {
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, "utf8"));
  } catch (err) {
    throw new Error(`${file}: not a readable trial spec (${(err as Error).message})`);
  }
  const spec = raw as Partial<RolloutRunSpec>;
  if (spec.schema_version !== 1 || !spec.task || !spec.rolloutName || !spec.jobDir)
    throw new Error(`${file}: not a trial spec written by this version of bench (schema_version 1)`);
  return spec as RolloutRunSpec;
}
