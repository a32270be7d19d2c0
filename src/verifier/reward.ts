// Reading the verifier's verdict. Only reward.json / reward.txt define the reward (upstream's
// contract); stdout is kept for people, never parsed for a score.
//
// One rule for both task layouts. Every key of reward.json is kept (each a finite number); the
// scalar `reward` is, in order: the file's own `reward` key; reward.txt beside a reward.json that has
// none (upstream's text compatibility); the aggregation the file declares (`aggregate`); else the
// mean of the keys (Harbor's default metric; upstream refuses such a file). The result records which.

export type RewardRule = "reward_key" | "reward_txt" | "aggregate" | "mean_of_keys";
export type RewardMap = { reward: number } & Record<string, number>;

export type RewardVerdict =
  | { ok: true; rewards: RewardMap; rule: RewardRule }
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

const METHODS = ["mean", "all_pass", "any_pass", "weighted_mean", "weighted_sum", "threshold"] as const;
type Method = (typeof METHODS)[number];

/** How a task's metrics make its reward: reward.json's `aggregate`, its method, weights and bar. */
interface Aggregation {
  method: Method;
  weights: Record<string, number>;
  /** all_pass / any_pass: a metric passes at or above it (default 1); threshold: the weighted mean's bar. */
  threshold: number | null;
}

type Parsed = { metrics: Record<string, number>; reward: number | null; aggregation: Aggregation | null };

/** Upstream's aggregation: `"aggregate": "<method>"` with `weights`, or `{"method": ..., ...}`. */
function aggregationOf(aggregate: unknown, weights: unknown): Aggregation | string {
  const block = isObject(aggregate) ? aggregate : { method: aggregate };
  const method = block.method;
  if (typeof method !== "string" || !(METHODS as readonly string[]).includes(method)) {
    return `reward.json aggregate method ${JSON.stringify(method)} is unknown: use one of ${METHODS.join(", ")}`;
  }
  const w = block.weights ?? weights ?? {};
  if (!isObject(w)) return "reward.json aggregate weights must be an object of key: number";
  for (const [k, v] of Object.entries(w)) {
    if (typeof v !== "number" || !Number.isFinite(v))
      return `reward.json aggregate weight ${k} must be a finite number`;
  }
  const threshold = block.threshold ?? null;
  if (threshold !== null && (typeof threshold !== "number" || !Number.isFinite(threshold)))
    return "reward.json aggregate threshold must be a finite number";
  if (method === "threshold" && threshold === null)
    return 'reward.json aggregate method "threshold" needs a numeric "threshold"';
  return { method: method as Method, weights: w as Record<string, number>, threshold };
}

function aggregate(metrics: Record<string, number>, p: Aggregation): number | string {
  const entries = Object.entries(metrics);
  if (entries.length === 0) return "reward.json has no metrics to aggregate";
  const values = entries.map(([, v]) => v);
  const weightOf = (k: string) => p.weights[k] ?? 1;
  const weighted = entries.reduce((s, [k, v]) => s + weightOf(k) * v, 0);
  const totalWeight = entries.reduce((s, [k]) => s + weightOf(k), 0);
  const bar = p.threshold ?? 1;
  switch (p.method) {
    case "mean":
      return values.reduce((a, b) => a + b, 0) / values.length;
    case "all_pass":
      return values.every((v) => v >= bar) ? 1 : 0;
    case "any_pass":
      return values.some((v) => v >= bar) ? 1 : 0;
    case "weighted_sum":
      return weighted;
    case "weighted_mean":
      return totalWeight === 0 ? "reward.json aggregate weights sum to 0" : weighted / totalWeight;
    case "threshold":
      return totalWeight === 0
        ? "reward.json aggregate weights sum to 0"
        : weighted / totalWeight >= bar
          ? 1
          : 0;
  }
}

/** Every key must be a finite number; the message names the key and the fix. */
function numbersOf(obj: Record<string, unknown>, where: string): Record<string, number> | string {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v !== "number" || !Number.isFinite(v)) {
      const got = typeof v === "number" ? String(v) : JSON.stringify(v);
      return `${where} key ${JSON.stringify(k)} must be a finite number; got ${got?.slice(0, 60)}. Write a number (booleans as 1 or 0), or move it out of reward.json`;
    }
    out[k] = v;
  }
  return out;
}

function parseRewardJson(text: string): Parsed | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "reward.json is not valid JSON";
  }
  if (typeof value === "number") return { metrics: {}, reward: value, aggregation: null };
  if (!isObject(value)) {
    return `reward.json at /logs/verifier must be an object of numbers, e.g. {"reward": 1}; got ${Array.isArray(value) ? "array" : typeof value}`;
  }
  const { aggregate: agg, weights, metrics: nested, ...rest } = value;
  let aggregation: Aggregation | null = null;
  if (agg !== undefined) {
    const p = aggregationOf(agg, weights);
    if (typeof p === "string") return p;
    aggregation = p;
  } else if (weights !== undefined) {
    return 'reward.json has "weights" but no "aggregate": name the method, e.g. "aggregate": "weighted_mean"';
  }
  // The older spelling keeps the metrics in their own map beside the aggregation.
  const source = nested === undefined ? rest : isObject(nested) ? { ...nested, ...rest } : null;
  if (source === null) return "reward.json metrics must be an object of key: number";
  const numbers = numbersOf(source, "reward.json");
  if (typeof numbers === "string") return numbers;
  const { reward, ...metrics } = numbers;
  return { metrics, reward: reward ?? null, aggregation };
}

/** Resolve the reward from the verifier's files: reward.json wins; when both exist they must agree. */
export function resolveReward(files: RewardFiles, range: [number, number]): RewardVerdict | null {
  let txt: number | undefined;
  if (files.txt !== undefined) {
    const t = parseRewardText(files.txt);
    if (typeof t === "string") return { ok: false, message: t };
    txt = t;
  }
  let scalar: number;
  let rule: RewardRule;
  let metrics: Record<string, number> = {};
  if (files.json !== undefined) {
    const parsed = parseRewardJson(files.json);
    if (typeof parsed === "string") return { ok: false, message: parsed };
    metrics = parsed.metrics;
    if (parsed.reward !== null) {
      [scalar, rule] = [parsed.reward, "reward_key"];
    } else if (parsed.aggregation) {
      const r = aggregate(metrics, parsed.aggregation);
      if (typeof r === "string") return { ok: false, message: r };
      [scalar, rule] = [r, "aggregate"];
    } else if (txt !== undefined) {
      [scalar, rule] = [txt, "reward_txt"];
    } else {
      const values = Object.values(metrics);
      if (values.length === 0)
        return { ok: false, message: 'reward.json is empty: write {"reward": <number>}' };
      [scalar, rule] = [values.reduce((a, b) => a + b, 0) / values.length, "mean_of_keys"];
    }
    if (txt !== undefined && rule !== "reward_txt" && Math.abs(txt - scalar) > 1e-6) {
      return { ok: false, message: `reward.json says ${scalar} but reward.txt says ${txt}: they must agree` };
    }
  } else if (txt !== undefined) {
    [scalar, rule] = [txt, "reward_txt"];
  } else {
    return null;
  }
  if (!Number.isFinite(scalar)) return { ok: false, message: `reward ${scalar} is not a finite number` };
  const [lo, hi] = range;
  if (scalar < lo || scalar > hi) {
    const how = rule === "reward_key" || rule === "reward_txt" ? "" : ` (the ${rule.replace(/_/g, " ")})`;
    return {
      ok: false,
      message: `reward ${scalar}${how} is outside the task's reward range [${lo}, ${hi}]`,
    };
  }
  return { ok: true, rewards: { reward: scalar, ...metrics }, rule };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
