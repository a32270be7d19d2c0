// The verifier phase of a one-step rollout, and what decides whose a verifier failure is. The policy
// can break its own verifier (fill the disk's inodes, leave an answer file too big to read in time),
// and a failure it chose must not withhold its rollout. So a failed verifier runs once more on a fresh
// copy of the agent's final workspace (only what the agent was asked to leave, in a new sandbox);
// if that also fails, the task's controls say whether the verifier fails on clean runs too.
import path from "node:path";
import { messageOf } from "../errors.js";
import { VERIFIER_RERUN } from "../jobs-dir/layout.js";
import type { Sandbox } from "../sandbox/types.js";
import type { TimingInfo } from "../schemas/result.js";
import { verifierModeOf } from "../task/verifier-mode.js";
import { runVerifier, taskVerifierRun, type VerifierOutcome } from "../verifier/run.js";
import { verifierHardening } from "./hardening.js";
import { enterPhaseNetwork } from "./network.js";
import { runSeparateVerifier, verifyStepApart } from "./separate-verifier.js";
import type { RolloutState } from "./state.js";
import type { RolloutPlan } from "./types.js";

export type Phase = (state: RolloutState, name: keyof TimingInfo, work: () => Promise<void>) => Promise<void>;

/** Runs the one-step task's verifier into state.verifier; throws what the verifier's infrastructure threw. */
export async function verifyRollout(
  plan: RolloutPlan,
  state: RolloutState,
  rolloutDir: string,
  phase: Phase,
): Promise<void> {
  state.reached = "verifier";
  const verify = (sandbox: Sandbox, apart: boolean, outDir?: string) =>
    runVerifier(sandbox, plan.task, rolloutDir, {
      ...taskVerifierRun(plan.task, rolloutDir),
      ...(outDir ? { outDir } : {}),
      hardening: verifierHardening(plan, state.verifierSnapshot, apart),
    });
  if (verifierModeOf(plan.task) === "separate") {
    // Already a fresh copy of the workspace: a second one would see the same input.
    await runSeparateVerifier(plan, state, rolloutDir, (box) => verify(box, true));
    return;
  }
  let thrown: unknown = null;
  await enterPhaseNetwork(plan, state, "verifier");
  try {
    await phase(state, "verifier", async () => {
      state.verifier = await verify(state.sandbox as Sandbox, false);
    });
  } catch (err) {
    if (plan.signal.aborted) throw err;
    thrown = err;
  }
  // A rollout no judge will charge (a control itself: a clean run) has nothing to prove by a second run.
  if ((thrown === null && !state.verifier?.error) || !plan.controls) {
    if (thrown !== null) throw thrown;
    return;
  }
  const rerun = await rerunApart(plan, state, (box) =>
    verify(box, true, path.join(rolloutDir, VERIFIER_RERUN)),
  );
  if (rerun.outcome?.rewards && !rerun.outcome.error) {
    // The agent's output, verified apart, scores: what failed was the agent's sandbox, not its answer.
    state.verifier = rerun.outcome;
    return;
  }
  if (thrown !== null) throw thrown;
}

/** The verifier once more, in a fresh sandbox holding the agent's workspace; recorded in state.verifierRerun. */
async function rerunApart(
  plan: RolloutPlan,
  state: RolloutState,
  verify: (sandbox: Sandbox) => Promise<VerifierOutcome>,
): Promise<{ outcome: VerifierOutcome | null }> {
  try {
    const outcome = await verifyStepApart(plan, state.sandbox as Sandbox, verify, {});
    state.verifierRerun = {
      reward: outcome.rewards?.reward ?? null,
      verifier_error_category: outcome.error?.category ?? null,
      verifier_error: outcome.error?.message ?? null,
    };
    return { outcome };
  } catch (err) {
    state.verifierRerun = { reward: null, verifier_error_category: null, verifier_error: messageOf(err) };
    return { outcome: null };
  }
}

/** The verifier failed after the policy acted: the task's controls decide whether that is the policy's doing. */
export async function judgeVerifierFailure(plan: RolloutPlan, state: RolloutState): Promise<void> {
  const failed = state.verifierInfra === true || state.verifier?.error != null;
  if (!failed || state.reached === undefined || !plan.controls || plan.signal.aborted) return;
  try {
    state.verifierVerdict = await plan.controls.verdict(plan.task, plan.taskDigest, plan.signal);
  } catch (err) {
    // No verdict: the failure stays masked (unproven), and the user hears why.
    plan.warn(`task ${plan.task.name}: its controls could not run: ${messageOf(err)}`);
  }
}
