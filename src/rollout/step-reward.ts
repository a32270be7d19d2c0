// How the steps of a multi-step rollout make its reward, as Harbor's MultiStepTrial does: the
// `min_reward` gate after each step, and `multi_step_reward_strategy` (mean: the per-key mean over
// the steps that produced a verifier result, a key missing from a step counting 0; final: the last
// executed step's rewards). Each step's own reward is kept as a key named by the step.
import type { RewardMap } from "../verifier/reward.js";

/** Why the rollout stops after this step, or null to go on. A missing key or result counts as -inf. */
export function minRewardStop(
  minReward: number | Record<string, number> | null,
  rewards: RewardMap | null,
): string | null {
  if (minReward === null) return null;
  const gates = typeof minReward === "number" ? { reward: minReward } : minReward;
  for (const [key, bar] of Object.entries(gates)) {
    const got = rewards?.[key] ?? Number.NEGATIVE_INFINITY;
    if (!(got >= bar)) return `min_reward: ${key} = ${rewards?.[key] ?? "missing"} is below ${bar}`;
  }
  return null;
}

export interface ScoredStep {
  name: string;
  rewards: RewardMap;
}

/** The rollout's rewards from its scored steps (at least one), and the step keys. */
export function combineStepRewards(steps: ScoredStep[], strategy: "mean" | "final"): RewardMap {
  let combined: Record<string, number>;
  if (strategy === "final") {
    combined = { ...(steps.at(-1)?.rewards ?? { reward: 0 }) };
  } else {
    const keys = [...new Set(steps.flatMap((s) => Object.keys(s.rewards)))];
    combined = Object.fromEntries(
      keys.map((k) => [k, steps.reduce((sum, s) => sum + (s.rewards[k] ?? 0), 0) / steps.length]),
    );
  }
  for (const s of steps) combined[s.name] = s.rewards.reward;
  return { ...combined, reward: combined.reward ?? 0 } as RewardMap;
}
