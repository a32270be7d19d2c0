// What one rollout has so far, phase by phase: the sandbox, the agent's events and result, how the
// agent phase ended, the verifier's outcome, the timing. runRollout fills it; record.ts turns it into
// the rollout's files, result.json last.
import type { AgentRunResult, HostPreparation, TrajectoryEvent } from "../agents/types.js";
import type { Sandbox } from "../sandbox/types.js";
import type { VerifierVerdict } from "../schemas/attribution.js";
import type { OutcomeCategory } from "../schemas/outcome.js";
import type { TimingInfo, VerifierRerun, WrittenStepResult } from "../schemas/result.js";
import type { VerifierOutcome } from "../verifier/run.js";
import type { VerifierSnapshot } from "../verifier/snapshot.js";
import type { ArtifactRecord } from "./artifacts.js";

export interface RolloutState {
  sandbox: Sandbox | null;
  prepared: HostPreparation | null;
  events: TrajectoryEvent[];
  agentResult: AgentRunResult | null;
  error: { category: OutcomeCategory; message: string } | null;
  verifier: VerifierOutcome | null;
  timing: TimingInfo;
  /** What the sandbox turned out to be (user, image, network enforcement), for config.json. */
  sandboxDetails?: Record<string, unknown>;
  /** A multi-step task: each step that ran, in order (result.json step_results). */
  stepResults?: WrittenStepResult[];
  /** What collectArtifacts found (artifacts/manifest.json, written after the logs' copy). */
  artifacts?: ArtifactRecord[];
  /** The instructions the agent was given (prompts.json); absent: the task's one instruction. */
  prompts?: string[];
  /** Taken before the agent's setup, for verifier hardening (null: hardening off). */
  verifierSnapshot?: VerifierSnapshot | null;
  /** The last phase the rollout entered of those that decide attribution: the policy's, then the verifier's. */
  reached?: "agent" | "verifier";
  /** The verifier phase failed as ours (an exception, not the test's own failure). */
  verifierInfra?: boolean;
  /** The verifier failed and ran again on a fresh copy of the workspace: what that run said. */
  verifierRerun?: VerifierRerun;
  /** The task's controls' verdict, asked when the verifier still failed after the policy acted. */
  verifierVerdict?: VerifierVerdict;
}

/** A rollout that ended before anything ran (the run stopped, a SLURM job that never ran it). */
export function emptyState(category: OutcomeCategory, message: string): RolloutState {
  return {
    sandbox: null,
    prepared: null,
    events: [],
    agentResult: null,
    error: { category, message },
    verifier: null,
    timing: {},
  };
}
