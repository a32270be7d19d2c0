// The one file a SLURM job gets: everything `bench _trial` needs to run one planned rollout on a node,
// written by the submitting host into the job folder's `.slurm/` (on the shared filesystem; readers
// of the jobs folder skip dot-folders). Functions cannot travel: the run's agent and sandbox go by
// name, and the gateway's hooks that are functions (usage, witness) stay on the host, which completes
// the node's result with them and writes result.json (rollout/record.ts).
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ModelAccess } from "../../agents/types.js";
import type { RolloutPlan, RunConfig } from "../../rollout/types.js";
import type { PolicyEndpoint, SandboxKind } from "../../sandbox/types.js";

export interface RolloutRunSpec
  extends Pick<RolloutPlan, "job" | "task" | "taskDigest" | "rolloutName" | "attempt" | "replaces"> {
  schema_version: 3;
  /** The run's configuration, with its agent by registry name and its sandbox by kind. */
  run: Omit<RunConfig, "agent" | "backend"> & {
    agent: string;
    /** Resolved on the submitting host (never `auto`), so one group never mixes sandboxes. */
    sandbox: SandboxKind;
  };
  /** This rollout's own gateway credential, at the address the nodes reach (--gateway-host). */
  modelAccess: ModelAccess | null;
  hostService: { port: number } | null;
  policyEndpoint: PolicyEndpoint | null;
  /** The jobs folder whose .controls/ judges the rollout's verifier failures (rollout/controls.ts). */
  controlsDir?: string | null;
}

export const SLURM_DIR = ".slurm";

/** Where a node leaves the rollout's result for the host (which writes result.json). */
export function nodeResultFile(plan: Pick<RolloutPlan, "job" | "rolloutName">): string {
  return path.join(plan.job.dir, SLURM_DIR, `${plan.rolloutName}.result.json`);
}

export function specOf(plan: RolloutPlan): RolloutRunSpec {
  // Field by field: the object behind plan.run is the whole run's (job/plan.ts), the policy's key included.
  const { run } = plan;
  return {
    schema_version: 3,
    run: {
      jobName: run.jobName,
      agent: run.agent.name,
      model: run.model,
      sandbox: run.backend.kind,
      agentEnv: run.agentEnv,
      verifierHardening: run.verifierHardening,
      record: run.record,
      groupIdentity: run.groupIdentity,
    },
    job: { dir: plan.job.dir, repeat: plan.job.repeat },
    task: plan.task,
    taskDigest: plan.taskDigest,
    rolloutName: plan.rolloutName,
    attempt: plan.attempt,
    replaces: plan.replaces,
    modelAccess: plan.hooks?.modelAccess ?? null,
    // The port only: the gateway's origin key never leaves the host (a node's calls are unattributed).
    hostService: plan.hooks?.hostService ? { port: plan.hooks.hostService.port } : null,
    policyEndpoint: plan.hooks?.policyEndpoint ?? null,
    controlsDir: plan.controls?.dir ?? null,
  };
}

/** Written readable by its owner only: it holds the rollout's gateway credential. */
export async function writeSpec(plan: RolloutPlan): Promise<string> {
  const dir = path.join(plan.job.dir, SLURM_DIR);
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
  if (spec.schema_version !== 3 || !spec.task || !spec.rolloutName || !spec.job?.dir || !spec.run)
    throw new Error(`${file}: not a trial spec written by this version of bench (schema_version 3)`);
  return spec as RolloutRunSpec;
}
