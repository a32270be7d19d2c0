// Score or mask: whether a trainer learns from a rollout, upstream's RL rule with upstream's names.
// A failure the policy can cause is the policy's: "a crash or lost sandbox after the policy acted
// scores 0 because the policy can kill its own sandbox; masking it would teach the policy to crash
// when it is failing". Only what the policy cannot cause is masked: the sandbox or the agent failing
// to start, the model endpoint, the run stopped, and a verifier that fails on its own (its
// infrastructure, or a crash on a clean run that the task's controls show).
import { z } from "zod";

export const SCORE_REASONS = [
  "scored",
  "timeout",
  "run_error",
  "verifier_error",
  "integrity_violation",
] as const;
export const MASK_REASONS = [
  "sandbox_start",
  "agent_setup",
  "model_endpoint",
  "verifier_infra",
  "verifier_crash_clean_run",
  // Ours: the task has no solution, so its controls cannot tell a broken verifier from a sabotaged one.
  "verifier_unproven",
  "infrastructure",
  "interrupted",
  "task_error",
  "config_error",
] as const;

export const Attribution = z.enum(["score", "mask"]);
export type Attribution = z.infer<typeof Attribution>;
export const AttributionReason = z.enum([...SCORE_REASONS, ...MASK_REASONS]);
export type AttributionReason = z.infer<typeof AttributionReason>;

/** What the task's controls (oracle and nop, on clean runs) say of its verifier (rollout/controls.ts). */
export const VerifierVerdict = z.enum(["sound", "crashes_on_clean_run", "unproven"]);
export type VerifierVerdict = z.infer<typeof VerifierVerdict>;

export interface AttributionFacts {
  errorCategory: string | null;
  verifierErrorCategory: string | null;
  /** The verifier wrote a valid reward. */
  hasReward: boolean;
  /** The agent ran and, when it calls a model, the model answered at least once. */
  policyActed: boolean;
  /** The verifier phase failed as ours (the verifier could not start or be read), not as the test. */
  verifierInfra: boolean;
  /** The task's controls' verdict, asked only when the verifier failed after the policy acted. */
  verifierVerdict: VerifierVerdict | null;
}

export interface Attributed {
  attribution: Attribution;
  reason: AttributionReason;
}

/** Agent-side categories the policy cannot cause, whatever it did before them. */
const MASKED_CATEGORY: Record<string, AttributionReason> = {
  sandbox_setup: "sandbox_start",
  agent_setup: "agent_setup",
  provider_error: "model_endpoint",
  interrupted: "interrupted",
  task_error: "task_error",
  config_error: "config_error",
};

const score = (reason: AttributionReason): Attributed => ({ attribution: "score", reason });
const mask = (reason: AttributionReason): Attributed => ({ attribution: "mask", reason });

export function attributionOf(f: AttributionFacts): Attributed {
  const masked = f.errorCategory ? MASKED_CATEGORY[f.errorCategory] : undefined;
  if (masked) return mask(masked);
  if (f.verifierInfra || f.verifierErrorCategory) return verifierAttribution(f);
  if (f.errorCategory === "infra_error") return f.policyActed ? score("run_error") : mask("infrastructure");
  if (f.hasReward) return score("scored");
  if (f.errorCategory === "timeout") return score("timeout");
  if (f.errorCategory === "agent_error") return score("run_error");
  // Neither a reward nor a failure: nothing says what happened (a writer that is not ours).
  return mask("infrastructure");
}

/** The verifier failed: the policy's only when it acted and the task's controls prove the verifier sound. */
function verifierAttribution(f: AttributionFacts): Attributed {
  if (!f.policyActed) return mask(f.verifierInfra ? "verifier_infra" : "verifier_crash_clean_run");
  if (f.verifierVerdict === "sound") return score("verifier_error");
  if (f.verifierVerdict === "crashes_on_clean_run")
    return mask(f.verifierInfra ? "verifier_infra" : "verifier_crash_clean_run");
  return mask("verifier_unproven");
}

export function isScoreReason(reason: string | null | undefined): boolean {
  return (SCORE_REASONS as readonly (string | null | undefined)[]).includes(reason);
}
