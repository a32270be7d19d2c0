// The one rule that decides how a rollout's agent phase ended, for every agent: the gateway's
// testimony about the model calls first, then the clock, then what the agent itself reported.
// An endpoint that failed is never the policy's reward; a request the policy made that the endpoint
// refused (400) is; a call cut off by the agent's own time limit is a timeout.
import type { ModelWitness } from "../gateway/index.js";
import type { OutcomeCategory } from "../schemas/outcome.js";

export interface AgentEnding {
  category: OutcomeCategory;
  message: string;
}

export interface AgentPhase {
  /** The agent ran past its time limit (the rollout stopped it). */
  deadlinePassed: boolean;
  /** The limit, for the message. */
  limitSec: number | null;
  /** What the agent reported or threw (null: it finished cleanly). */
  agent: AgentEnding | null;
  /** What the gateway saw; null when the agent calls no model. */
  witness: ModelWitness | null;
}

/** The category and message the agent phase ends with, or null when it ended cleanly. */
export function decideAgentEnding(p: AgentPhase): AgentEnding | null {
  const w = p.witness;
  if (w?.endedBy) return w.endedBy;
  const last = w?.last ?? null;
  if (last?.fault === "config") return { category: "config_error", message: last.message ?? "" };
  // The rollout's last call failed at the endpoint: whatever the agent did afterwards (gave up,
  // crashed, retried until its time ran out), the endpoint ended it.
  if (last?.fault === "endpoint") {
    return { category: "provider_error", message: `the policy endpoint failed: ${last.message ?? ""}` };
  }
  if (last?.fault === "gateway")
    return { category: "infra_error", message: `gateway: ${last.message ?? ""}` };
  if (p.deadlinePassed) return { category: "timeout", message: `agent timed out after ${p.limitSec}s` };
  const own = p.agent;
  // An agent that blames the endpoint while the gateway saw its calls succeed (or the policy's own
  // request refused) is wrong about whose failure it was: the witness wins.
  if (own?.category === "provider_error" && w && w.calls > 0) {
    return { category: "agent_error", message: own.message };
  }
  return own;
}
