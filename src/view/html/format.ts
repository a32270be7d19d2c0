// Numbers as the pages and `bench results` print them: the same rounding in both.
export const DASH = "—";

export function fixed(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  const s = v.toFixed(digits);
  // -0.000 reads as a sign where there is none.
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

export function int(v: number | null | undefined): string {
  return v === null || v === undefined ? DASH : String(Math.round(v));
}

export function seconds(v: number | null | undefined): string {
  if (v === null || v === undefined) return DASH;
  if (v < 60) return `${v.toFixed(1)} s`;
  if (v < 3600) return `${(v / 60).toFixed(1)} min`;
  return `${(v / 3600).toFixed(2)} h`;
}

export function usd(v: number | null | undefined): string {
  return v === null || v === undefined ? DASH : `$${v.toFixed(4)}`;
}

export const CATEGORY_LABEL: Record<string, string> = {
  scored: "scored",
  policy_failure: "policy failure",
  infrastructure_failure: "infrastructure failure",
  task_failure: "task failure",
  withheld: "withheld",
};

/** The masked count and its share of the rollouts: a mean is read with what it leaves out. */
export function maskedText(t: { masked: number; rollouts: number }): string {
  if (t.rollouts === 0) return "0";
  return `${t.masked} (${Math.round((100 * t.masked) / t.rollouts)}%)`;
}
