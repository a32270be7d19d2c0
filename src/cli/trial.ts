// `bench _trial SPEC.json` (hidden): what a SLURM job runs on its node. It runs one planned trial,
// the same runTrial as the local executor, and writes the rollout folder into the shared jobs folder.
// Exit 0 whenever result.json was written (whatever the trial's outcome); the host reads that file.
import type { Command } from "commander";
import type { SkillMode } from "../agents/in-sandbox/skills.js";
import { resolveAgent } from "../agents/registry.js";
import { readSpec } from "../job/slurm/spec.js";
import { sandboxBackends } from "../sandbox/index.js";
import { runTrial } from "../trial/run.js";
import { ExitCode } from "./errors.js";

export function registerTrialCommand(program: Command): void {
  program
    .command("_trial", { hidden: true })
    .argument("<spec>", "the trial spec the submitting host wrote")
    .action(async (specFile: string) => {
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
      const result = await runTrial({
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
        },
        signal: stop.signal,
        warn: (m) => process.stderr.write(`bench _trial: ${m}\n`),
        deferCleanup: (work) => cleanups.push(work),
      });
      await Promise.all(cleanups);
      process.stderr.write(`bench _trial: ${result.rollout_name}: ${result.error_category ?? "finished"}\n`);
      if (stop.signal.aborted) throw new ExitCode(143);
    });
}
