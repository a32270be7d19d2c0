// What a SLURM job runs on its node: one planned rollout from its spec, the same runRollout as the
// local executor, writing the rollout folder into the shared jobs folder and its result where the
// host completes it (spec.ts nodeResultFile). Kept apart from the CLI so the node loads only a
// rollout's code (src/cli/trial-entry.ts), not every command: Node's start is most of what
// --executor slurm adds to a rollout.
import type { SkillMode } from "../../agents/in-sandbox/skills.js";
import { resolveAgent } from "../../agents/registry.js";
import { envVar } from "../../env.js";
import { controlsJudge } from "../../rollout/controls.js";
import { runRollout } from "../../rollout/run.js";
import type { RunConfig } from "../../rollout/types.js";
import { sandboxBackends } from "../../sandbox/index.js";
import { nodeResultFile, type RolloutRunSpec, readSpec } from "./spec.js";

/** The run's configuration again, its agent and sandbox resolved here by name. */
function runConfigOf(spec: RolloutRunSpec): RunConfig {
  const { agent, sandbox, ...run } = spec.run;
  const factory = sandboxBackends[sandbox];
  if (!factory) throw new Error(`sandbox ${sandbox} is not in this build`);
  const skillMode = run.record.skill_mode as SkillMode | undefined;
  const skillsDir = (run.record.skills_dir as string | null | undefined) ?? null;
  return {
    ...run,
    agent: resolveAgent(agent, { ...(skillMode ? { skillMode } : {}), skillsDir }),
    backend: factory(),
  };
}

/** Runs the rollout; 0 whenever its result was written (whatever its outcome), 143 after SIGTERM. */
export async function runRolloutOnNode(specFile: string): Promise<number> {
  const spec = await readSpec(specFile);
  const run = runConfigOf(spec);
  // SLURM's scancel (or preemption) sends SIGTERM: the rollout ends as interrupted and says so.
  const stop = new AbortController();
  process.on("SIGTERM", () => stop.abort());
  process.on("SIGINT", () => stop.abort());
  const cleanups: Promise<void>[] = [];
  const result = await runRollout({
    run,
    job: spec.job,
    task: spec.task,
    taskDigest: spec.taskDigest,
    rolloutName: spec.rolloutName,
    attempt: spec.attempt,
    replaces: spec.replaces,
    hooks: {
      modelAccess: spec.modelAccess,
      // On a node the gateway is the submitting host's, at the address in this rollout's base URL.
      hostService: spec.hostService && {
        ...spec.hostService,
        ...(spec.modelAccess ? { host: new URL(spec.modelAccess.baseUrl).hostname } : {}),
      },
      policyEndpoint: spec.policyEndpoint,
    },
    // Where it ran, in its result: the host may read it before squeue says the job ended.
    executor: {
      kind: "slurm",
      node: envVar("SLURMD_NODENAME") ?? null,
      slurm_job_id: envVar("SLURM_JOB_ID") ?? null,
    },
    ...(spec.controlsDir ? { controls: controlsJudge(spec.controlsDir, run) } : {}),
    signalReachesSandbox: true,
    resultFile: nodeResultFile(spec),
    signal: stop.signal,
    warn: (m) => process.stderr.write(`bench _trial: ${m}\n`),
    deferCleanup: (work) => cleanups.push(work),
  });
  await Promise.all(cleanups);
  process.stderr.write(`bench _trial: ${result.rollout_name}: ${result.error_category ?? "finished"}\n`);
  return stop.signal.aborted ? 143 : 0;
}
