// What a rollout's model calls say, for the group rules (a rollout that never reached the model
// withholds its group) and for the readers that show them: how many, how many got an answer, and
// the policy versions they name. A Rollout carries them once a reader read its calls (withCalls in
// rollout.ts, which reads trajectory/llm_trajectory.jsonl).
import { type Exchange, isSuccessful, policyVersions } from "./exchange.js";

export interface CallFacts {
  /** Model calls recorded; 0 when the rollout has no llm_trajectory.jsonl. */
  total: number;
  /** Calls that reached the model and got an answer (exchange.ts isSuccessful). */
  ok: number;
  /** Whether llm_trajectory.jsonl exists (an oracle or nop rollout has none). */
  recorded: boolean;
  /** Every policy version the calls name, sorted. */
  policyVersions: string[];
  /** A broken llm_trajectory.jsonl (a line cut short while a run writes it); the counts are then 0. */
  problem: string | null;
}

export function callFactsOf(exchanges: readonly Exchange[] | undefined): CallFacts {
  return {
    total: exchanges?.length ?? 0,
    ok: exchanges?.filter(isSuccessful).length ?? 0,
    recorded: exchanges !== undefined,
    policyVersions: policyVersions(exchanges),
    problem: null,
  };
}
