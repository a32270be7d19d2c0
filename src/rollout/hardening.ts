// The rollout's side of verifier hardening (verifier/harden.ts): the switch (--verifier-hardening,
// default on), the snapshot taken before the agent, and what each verifier run is given.
import type { Sandbox } from "../sandbox/types.js";
import type { VerifierRun } from "../verifier/run.js";
import { snapshotForVerifier, type VerifierSnapshot } from "../verifier/snapshot.js";
import type { RolloutPlan } from "./types.js";

export type HardeningSwitch = "on" | "off";

/** The run's switch (config.json records it as `verifier_hardening`). */
const hardeningSwitch = (plan: RolloutPlan): HardeningSwitch => plan.run.verifierHardening;

/** Before the agent's setup: nothing the agent does can reach it. Null when hardening is off. */
export async function takeVerifierSnapshot(
  plan: RolloutPlan,
  sandbox: Sandbox,
): Promise<VerifierSnapshot | null> {
  return hardeningSwitch(plan) === "on" ? snapshotForVerifier(sandbox) : null;
}

/**
 * What runVerifier is given: the snapshot and the task's one flag, or "off". `apart`: a separate
 * verifier's fresh sandbox, where the agent never ran, so its processes are all the environment's.
 */
export function verifierHardening(
  plan: RolloutPlan,
  snapshot: VerifierSnapshot | null | undefined,
  apart = false,
): VerifierRun["hardening"] {
  if (hardeningSwitch(plan) === "off" || !snapshot) return "off";
  return {
    snapshot,
    cleanupConftests: plan.task.config.verifier.hardening?.cleanupConftests ?? true,
    restoreBuildFiles: plan.task.config.verifier.hardening?.restoreBuildFiles ?? true,
    ...(apart ? { killUnknownProcesses: false } : {}),
  };
}
