// What a SLURM job runs on its node: one planned trial from its spec, the same runTrial as the local
// executor, writing the rollout folder into the shared jobs folder. Kept apart from the CLI so the
// node loads only a trial's code (src/cli/trial-entry.ts), not every command: Node's start is most
// of what --executor slurm adds to a trial.
import type { SkillMode } from "../../agents/in-sandbox/skills.js";
import { resolveAgent } from "../../agents/registry.js";
import { runRollout } from "../../rollout/run.js";
import { sandboxBackends } from "../../sandbox/index.js";
import { outcomeOf } from "../../schemas/outcome.js";
import { readSpec } from "./spec.js";

/** Runs the trial; 0 whenever result.json was written (whatever its outcome), 143 after SIGTERM. */
export async function runRolloutOnNode(specFile: string): Promise<number> {
  const spec = await readSpec(specFile);
  const factory = sandboxBackends[spec.sandbox];
  if (!factory) throw new Error(`sandbox ${spec.sandbox} is not in this build`);
  const skillMode = spec.settings.skill_mode as SkillMode | undefined;
  const skillsDir = (spec.settings.skills_dir as string | null | undefined) ?? null;
  const agent = resolveAgent(spec.agent, { ...(skillMode ? { skillMode } : {}), skillsDir });
  // SLURM's scancel (or preemption) sends SIGTERM: the trial ends as interrupted and says so.
  const stop = new AbortController();
  process.on("SIGTERM", () => stop.abort());
  process.on("SIGINT", () => stop.abort());
  const cleanups: Promise<void>[] = [];
  const result = await runRollout({
    task: spec.task,
    taskDigest: spec.taskDigest,
    jobDir: spec.jobDir,
    jobName: spec.jobName,
    repeatLabel: spec.repeatLabel,
    rolloutName: spec.rolloutName,
    attempt: spec.attempt,
    replaces: spec.replaces,
    agent,
    model: spec.model,
    backend: factory(),
    settings: spec.settings,
    agentEnv: spec.agentEnv,
    ...(spec.verifierHardening ? { verifierHardening: spec.verifierHardening } : {}),
    hooks: {
      modelAccess: spec.modelAccess,
      // On a node the gateway is the submitting host's, at the address in this trial's base URL.
      hostService: spec.hostService && {
        ...spec.hostService,
        ...(spec.modelAccess ? { host: new URL(spec.modelAccess.baseUrl).hostname } : {}),
      },
      policyEndpoint: spec.policyEndpoint,
      // Where it ran, in result.json itself: the host may read the rollout before squeue says the job ended.
      finalize: async (r) => {
        const executor = {
          kind: "slurm" as const,
          node: process.env.SLURMD_NODENAME ?? null,
          slurm_job_id: process.env.SLURM_JOB_ID ?? null,
        };
        if (!stop.signal.aborted || r.error_category === "interrupted") return { ...r, executor };
        // SLURM signals every process of the job at once: the verifier may die of it (rc 143) before
        // this process hears it, which would read as the task's own verifier failing. Whatever the
        // phase saw, a signalled trial is interrupted; the host decides from SLURM's end what it was.
        return {
          ...r,
          rewards: null,
          error: `SLURM signalled the trial while it ran (scancel, preemption or its time limit)${r.error ? `; then: ${r.error}` : ""}`,
          error_category: "interrupted",
          outcome: outcomeOf("interrupted", r.verifier_error_category),
          executor,
        };
      },
    },
    signal: stop.signal,
    warn: (m) => process.stderr.write(`bench _trial: ${m}\n`),
    deferCleanup: (work) => cleanups.push(work),
  });
  await Promise.all(cleanups);
  process.stderr.write(`bench _trial: ${result.rollout_name}: ${result.error_category ?? "finished"}\n`);
  return stop.signal.aborted ? 143 : 0;
}
