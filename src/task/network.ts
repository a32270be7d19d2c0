// Which network each phase of a rollout gets. The baseline ([environment] / sandbox network_mode)
// covers the sandbox's start and agent setup. In the Harbor layout [agent].network_mode overrides
// it around the agent's run only and [verifier].network_mode around the verifier only; the task.md
// layout has the baseline for every phase, as upstream BenchFlow (it parses and ignores them).
import type { NetworkMode } from "./config-reader.js";
import type { Task } from "./types.js";

export type NetworkPhase = "agent" | "verifier";

export function phaseNetworkMode(task: Task, phase?: NetworkPhase): NetworkMode {
  const baseline = task.config.sandbox.networkMode;
  if (phase === undefined || task.layout === "native") return baseline;
  return task.config[phase].networkMode ?? baseline;
}

/** Network on (public) for the phase; allowlists never load, so anything else is "no network". */
export function phaseHasNetwork(task: Task, phase?: NetworkPhase): boolean {
  return phaseNetworkMode(task, phase) === "public";
}

/** Whether some phase of the rollout needs the network. */
export function anyPhaseHasNetwork(task: Task): boolean {
  return [undefined, "agent", "verifier"].some((p) => phaseHasNetwork(task, p as NetworkPhase | undefined));
}
