// One outcome table for the whole project (docs/read-the-results.md shows it to users). Trainers read these names to tell
// infrastructure failures (mask) from policy failures (data) from task failures (unscored).
import { z } from "zod";

export const AGENT_ERROR_CATEGORIES = [
  "timeout",
  "agent_error",
  "agent_setup",
  "sandbox_setup",
  "provider_error",
  "interrupted",
  "infra_error",
  "config_error",
  "task_error",
] as const;
export const VERIFIER_ERROR_CATEGORIES = ["verifier_failure", "verifier_timeout"] as const;

export const AgentErrorCategory = z.enum(AGENT_ERROR_CATEGORIES);
export type AgentErrorCategory = z.infer<typeof AgentErrorCategory>;
export const VerifierErrorCategory = z.enum(VERIFIER_ERROR_CATEGORIES);
export type VerifierErrorCategory = z.infer<typeof VerifierErrorCategory>;
export type OutcomeCategory = AgentErrorCategory | VerifierErrorCategory;

/** Whose failure a category is: decides retries (infrastructure only) and masking in training. */
export type FailureOwner = "policy" | "infrastructure" | "task" | "user";

const OWNER: Record<OutcomeCategory, FailureOwner> = {
  timeout: "policy",
  agent_error: "policy",
  agent_setup: "infrastructure",
  sandbox_setup: "infrastructure",
  provider_error: "infrastructure",
  interrupted: "infrastructure",
  infra_error: "infrastructure",
  // The user's configuration (key refused, model not served): no retry can fix it, so the job stops.
  config_error: "user",
  // The task cannot run as written (no solution for -a oracle, an image that does not exist):
  // it fails the same way every time, so it is never retried.
  task_error: "task",
  verifier_failure: "task",
  verifier_timeout: "task",
};

export function ownerOf(category: OutcomeCategory): FailureOwner {
  return OWNER[category];
}

export function isInfrastructure(category: string | null | undefined): boolean {
  return category != null && (OWNER as Record<string, FailureOwner>)[category] === "infrastructure";
}

/** Unscored by construction: the rollout says nothing about the policy (infrastructure, user, task setup). */
export function isUnscoredFailure(category: string | null | undefined): boolean {
  if (category == null) return false;
  const owner = (OWNER as Record<string, FailureOwner>)[category];
  return owner === "infrastructure" || owner === "user" || category === "task_error";
}

/**
 * Failures worth another attempt: infrastructure that can pass (an interrupt is resumed, not retried),
 * unless it is the policy's (a lost sandbox after the policy acted is scored 0: data, not retried).
 */
export function isRetryable(category: string | null | undefined, attribution?: string | null): boolean {
  return isInfrastructure(category) && category !== "interrupted" && attribution !== "score";
}

/**
 * The one outcome of a rollout. Infrastructure beats verifier beats policy: the question a
 * trainer asks is "may I learn from this?", and an infrastructure failure answers it first.
 */
export function outcomeOf(
  errorCategory: string | null | undefined,
  verifierErrorCategory: string | null | undefined,
): string | null {
  if (errorCategory && isUnscoredFailure(errorCategory)) return errorCategory;
  if (verifierErrorCategory) return verifierErrorCategory;
  return errorCategory ?? null;
}

/** Upstream's disjoint score buckets (summary.json counts). */
export type ScoreOutcome = "passed" | "failed" | "errored" | "verifier_errored";

export function scoreOutcomeOf(r: {
  reward: number | null;
  error_category: string | null;
  verifier_error_category: string | null;
}): ScoreOutcome {
  if (r.reward !== null) return r.reward === 1 ? "passed" : "failed";
  if (r.error_category && r.error_category !== "timeout" && r.error_category !== "agent_error")
    return "errored";
  if (r.verifier_error_category) return "verifier_errored";
  return "errored";
}
