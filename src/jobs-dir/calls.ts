// What a rollout's model calls say, for the group rules (a rollout that never reached the model
// withholds its group) and for the readers that show them: how many, how many got an answer, and
// the policy versions they name. Read from trajectory/llm_trajectory.jsonl once a reader needs it.
import path from "node:path";
import { type Exchange, isSuccessful, policyVersions, readExchanges } from "./exchange.js";
import { TRAJECTORY } from "./layout.js";
import type { Rollout } from "./rollout.js";

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

/** The rollout's calls read and parsed; a line that does not parse throws (DataError). */
export function readRolloutExchanges(
  r: Pick<Rollout, "dir" | "displayDir">,
): Promise<Exchange[] | undefined> {
  return readExchanges(path.join(r.dir, TRAJECTORY), path.join(r.displayDir, TRAJECTORY));
}

/** The rollout with its call facts; a broken file is a fact (`problem`), not a failure. */
export async function withCalls(r: Rollout): Promise<Rollout> {
  try {
    return { ...r, calls: callFactsOf(await readRolloutExchanges(r)) };
  } catch (err) {
    return { ...r, calls: { ...callFactsOf(undefined), recorded: true, problem: (err as Error).message } };
  }
}
