// Group-relative advantages: pure maths, no I/O, so convert, stream and the library share one answer.

export type Normalisation = "grpo" | "loo";
export const NORMALISATIONS: readonly Normalisation[] = ["grpo", "loo"];

export const EPS = 0.0001;
export const STD_DDOF = 1;

export const FORMULAS: Record<Normalisation, string> = {
  grpo: "advantage = (reward - mean) / (std + eps); mean and sample std (ddof 1) over the scored rollouts of the group",
  loo: "advantage = reward - mean(rewards of the other scored rollouts of the group)",
};

export interface Baseline {
  mean: number | null;
  /** Sample std (ddof 1); null with fewer than two scored rewards. */
  std: number | null;
  /** One per input reward; null when there is no advantage to give (fewer than two scored). */
  advantages: Array<number | null>;
}

/** Advantages over scored rewards; every reward passed here is in the baseline. */
export function baselineOf(rewards: readonly number[], normalisation: Normalisation): Baseline {
  const n = rewards.length;
  const first = rewards[0];
  if (first === undefined) return { mean: null, std: null, advantages: [] };
  // Equal rewards give exactly 0, whatever rounding the sum picked up.
  const allEqual = rewards.every((r) => r === first);
  const sum = rewards.reduce((a, b) => a + b, 0);
  const mean = allEqual ? first : sum / n;
  if (n < 2) return { mean, std: null, advantages: [null] };
  const std = allEqual ? 0 : Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - STD_DDOF));
  // All-equal rewards say nothing about what to change: 0 for every rollout.
  if (allEqual) return { mean, std, advantages: rewards.map(() => 0) };
  if (normalisation === "loo") return { mean, std, advantages: rewards.map((r) => r - (sum - r) / (n - 1)) };
  return { mean, std, advantages: rewards.map((r) => (r - mean) / (std + EPS)) };
}
