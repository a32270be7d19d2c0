// A phase's network ([agent] / [verifier] network_mode, Harbor layout) around that phase only.
// A sandbox that cannot switch its network during a rollout (the container sandbox) keeps the
// baseline; the rollout then says once, in its warnings and its record, that the override was not
// applied, rather than pretending it was.
import { type NetworkPhase, phaseHasNetwork, phaseNetworkMode } from "../task/network.js";
import type { RolloutState } from "./state.js";
import type { RolloutPlan } from "./types.js";

export async function enterPhaseNetwork(
  plan: RolloutPlan,
  state: RolloutState,
  phase: NetworkPhase,
): Promise<void> {
  const sandbox = state.sandbox;
  if (sandbox === null) return;
  const { task } = plan;
  const wanted = phaseHasNetwork(task, phase);
  if (sandbox.setNetwork) {
    await sandbox.setNetwork(wanted);
    return;
  }
  if (wanted === phaseHasNetwork(task)) return;
  const baseline = task.config.sandbox.networkMode;
  const warning = `[${phase}].network_mode = "${phaseNetworkMode(task, phase)}" is not applied in the ${sandbox.kind} sandbox: the ${phase} runs with the task's baseline network ("${baseline}")`;
  plan.warn(`task ${task.name}: ${warning}`);
  const details = state.sandboxDetails;
  if (details) details.sandbox_warnings = [...((details.sandbox_warnings as string[]) ?? []), warning];
}
