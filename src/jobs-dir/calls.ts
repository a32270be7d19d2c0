// What a rollout's model calls say, for the group rules (a rollout that never reached the model
// withholds its group) and for the readers that show them: how many, how many got an answer, and
// the policy versions they name. Read from trajectory/llm_trajectory.jsonl once a reader needs it.
import path from "node:path";
import { type Exchange, isSuccessful, policyVersions, readExchanges } from "./exchange.js";
import { TRAJECTORY } from "./layout.js";
import type { CallFacts, Rollout } from "./rollout.js";

export type { CallFacts } from "./rollout.js";

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
