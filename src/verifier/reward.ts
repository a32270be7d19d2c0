// Reading the verifier's verdict. Only reward.json / reward.txt define the reward (upstream's
// contract); stdout is kept for people, never parsed for a score.

export type RewardVerdict =
  | { ok: true; rewards: { reward: number } & Record<string, unknown> }
  | { ok: false; message: string };

export interface RewardFiles {
  /** Contents of reward.json, or undefined when absent. */
  json?: string;
  /** Contents of reward.txt, or undefined when absent. */
  txt?: string;
}

/** Python's float() accepts these spellings; we accept the same text and then demand finiteness. */
const FLOAT_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^[+-]?(nan|inf|infinity)$/i;

function parseRewardText(text: string): number | string {
  const t = text.trim();
  if (t === "") return "reward.txt is empty: write one number, e.g. 1 or 0.5";
  if (!FLOAT_TEXT.test(t)) return `reward.txt must hold one number; got ${JSON.stringify(t.slice(0, 40))}`;
  const lower = t.toLowerCase().replace(/^[+-]/, "");
  if (lower === "nan") return "reward.txt holds NaN: the reward must be a finite number";
  if (lower.startsWith("inf")) return "reward.txt holds infinity: the reward must be a finite number";
  return Number(t);
}

type JsonReward = { reward: number; extra: Record<string, unknown> } | string;

function aggregate(metrics: Record<string, unknown>, policy: unknown, weights: unknown): number | string {
  const entries = Object.entries(metrics);
  if (entries.length === 0) return "reward.json metrics is empty";
  for (const [k, v] of entries) {
    if (typeof v !== "number" || !Number.isFinite(v))
      return `reward.json metric ${k} must be a finite number`;
  }
  const values = entries.map(([, v]) => v as number);
  if (policy === undefined || policy === "mean") return values.reduce((a, b) => a + b, 0) / values.length;
  const w = (weights ?? {}) as Record<string, unknown>;
  const weightOf = (k: string) => (typeof w[k] === "number" ? (w[k] as number) : 1);
  const weighted = entries.reduce((s, [k, v]) => s + weightOf(k) * (v as number), 0);
  if (policy === "weighted_sum") return weighted;
  if (policy === "weighted_mean") {
    const total = entries.reduce((s, [k]) => s + weightOf(k), 0);
    return total === 0 ? "reward.json weights sum to 0" : weighted / total;
  }
  return `reward.json aggregate ${JSON.stringify(policy)} is unknown: use mean, weighted_mean or weighted_sum`;
}

function parseRewardJson(text: string): JsonReward {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "reward.json is not valid JSON";
  }
  if (typeof value === "number") return { reward: value, extra: {} };
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return `reward.json at /logs/verifier must be an object with a numeric "reward"; got ${Array.isArray(value) ? "array" : typeof value}`;
  }
  const obj = value as Record<string, unknown>;
  if ("reward" in obj) {
    if (typeof obj.reward !== "number")
      return `reward.json "reward" must be a number; got ${JSON.stringify(obj.reward)}`;
    const { reward, ...extra } = obj;
    return { reward, extra };
  }
  if (obj.metrics && typeof obj.metrics === "object") {
    const r = aggregate(obj.metrics as Record<string, unknown>, obj.aggregate, obj.weights);
    return typeof r === "string" ? r : { reward: r, extra: { ...(obj.metrics as Record<string, unknown>) } };
  }
  return 'reward.json has no "reward" field: write {"reward": <number>}';
}

/** Resolve the reward from the verifier's files: reward.json wins; when both exist they must agree. */
export function resolveReward(files: RewardFiles, range: [number, number]): RewardVerdict | null {
  let reward: number;
  let extra: Record<string, unknown> = {};
  if (files.json !== undefined) {
    const parsed = parseRewardJson(files.json);
    if (typeof parsed === "string") return { ok: false, message: parsed };
    reward = parsed.reward;
    extra = parsed.extra;
    if (files.txt !== undefined) {
      const txt = parseRewardText(files.txt);
      if (typeof txt === "string") return { ok: false, message: txt };
      if (Math.abs(txt - reward) > 1e-6) {
        return {
          ok: false,
          message: `reward.json says ${reward} but reward.txt says ${txt}: they must agree`,
        };
      }
    }
  } else if (files.txt !== undefined) {
    const txt = parseRewardText(files.txt);
    if (typeof txt === "string") return { ok: false, message: txt };
    reward = txt;
  } else {
    return null;
  }
  if (!Number.isFinite(reward)) return { ok: false, message: `reward ${reward} is not a finite number` };
  const [lo, hi] = range;
  if (reward < lo || reward > hi) {
    return { ok: false, message: `reward ${reward} is outside the task's reward range [${lo}, ${hi}]` };
  }
  return { ok: true, rewards: { reward, ...extra } };
}
