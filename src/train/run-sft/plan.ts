// The Prime-RL options `bench train run sft` turns into `--KEY VALUE` arguments: the user's
// `--override KEY=VALUE` pairs, then the ones our first-class flags generate (max_steps from a
// target number of examples, the loss mask per role, ...). Pure: no I/O, so every refusal is
// checked before anything is written. Semantics (and the manifest's exposure plan) follow
// upstream's Prime-RL wrapper so a run recorded by either reads the same.

import { opt } from "../../options.js";
import { SftRefusal } from "./refusal.js";

export interface PlanFlags {
  overrides: readonly string[];
  targetExamples?: number;
  targetMicroSteps?: number;
  syncSchedulerToMaxSteps: boolean;
  syncCkptToMaxSteps: boolean;
  packFunction?: string;
  lossMask?: string;
  modelAttn?: string;
  rendererMode?: string;
  /** token_mean, sample_mean or one of their aliases; absent: Prime-RL's own (token_mean). */
  lossNormalization?: string;
  allowUnsafeStackFlashAttn: boolean;
}

/** `extra.prime_rl_sft_exposure_plan` in train-run.json: upstream's field names. */
export interface ExposurePlan {
  target_examples: number | null;
  target_micro_steps: number | null;
  data_batch_size: number | null;
  derived_max_steps: number | null;
  effective_train_examples: number | null;
  unapplied_micro_steps: number | null;
  sync_scheduler_to_max_steps: boolean;
  sync_ckpt_to_max_steps: boolean;
  pack_function: string | null;
  loss_mask: string | null;
  model_attn: string | null;
  renderer_mode: string | null;
  generated_overrides: string[];
}

export type TomlTable = Record<string, unknown>;

const ROLES = ["system", "user", "assistant", "tool"] as const;

/** KEY=VALUE pairs in order; a later one wins, as it does on Prime-RL's command line. */
export function overrideMap(overrides: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const o of overrides) {
    const eq = o.indexOf("=");
    if (eq < 0) throw new SftRefusal(`${opt("overrides")} must be KEY=VALUE, got "${o}".`);
    const key = o.slice(0, eq).trim();
    if (!key) throw new SftRefusal(`${opt("overrides")} must have a non-empty key: "${o}".`);
    map.set(key, o.slice(eq + 1));
  }
  return map;
}

/** `["--KEY", "VALUE", ...]`: how Prime-RL's CLI takes a config override. */
export function overrideArgs(overrides: readonly string[]): string[] {
  overrideMap(overrides); // the same refusals, before any argument is formed
  return overrides.flatMap((o) => {
    const eq = o.indexOf("=");
    return [`--${o.slice(0, eq).trim()}`, o.slice(eq + 1)];
  });
}

/** A dotted key looked up in the TOML config, as Prime-RL nests it (`data.batch_size`). */
export function configValue(config: TomlTable, key: string): unknown {
  let cur: unknown = config;
  for (const part of key.split(".")) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur) || !(part in cur)) return undefined;
    cur = (cur as TomlTable)[part];
  }
  return cur;
}

/** What Prime-RL will use: an override wins over the config file. */
export function effectiveValue(config: TomlTable, overrides: Map<string, string>, key: string): unknown {
  return overrides.has(key) ? overrides.get(key) : configValue(config, key);
}

export function positiveInt(value: unknown, key: string): number {
  const bad = () => new SftRefusal(`${key} must be a positive integer, got ${JSON.stringify(value)}.`);
  let n: number;
  if (typeof value === "number" || typeof value === "bigint") n = Number(value);
  else if (typeof value === "string" && /^\d+$/.test(value.trim())) n = Number(value.trim());
  else throw bad();
  if (!Number.isInteger(n) || n <= 0) throw bad();
  return n;
}

function asString(v: unknown): string | null {
  return v === undefined || v === null ? null : String(v);
}

function dataBatchSize(config: TomlTable, overrides: Map<string, string>): number {
  const fromOverride = overrides.get("data.batch_size");
  const raw = fromOverride ?? configValue(config, "data.batch_size");
  if (raw === undefined)
    throw new SftRefusal(
      `${opt("targetExamples")} requires data.batch_size in the Prime-RL config or an explicit ${opt("overrides", "data.batch_size=...")}`,
    );
  return positiveInt(
    raw,
    fromOverride !== undefined ? opt("overrides", "data.batch_size") : "config data.batch_size",
  );
}

/** `all`, `assistant`, or roles joined by commas: one `data.loss_mask.ROLE=true|false` per role. */
export function lossMaskOverrides(raw: string): { normalized: string; overrides: string[] } {
  const value = raw.trim().toLowerCase().replaceAll("_", "-");
  let enabled: Set<string>;
  if (value === "all") enabled = new Set(ROLES);
  else if (value === "assistant") enabled = new Set(["assistant"]);
  else {
    const parts = value.split(",").map((p) => p.trim());
    if (parts.some((p) => !p))
      throw new SftRefusal(`${opt("lossMask")} must be 'all', 'assistant', or comma-separated roles.`);
    enabled = new Set(parts);
    const unknown = [...enabled].filter((r) => !(ROLES as readonly string[]).includes(r)).sort();
    if (unknown.length > 0)
      throw new SftRefusal(
        `${opt("lossMask")} roles must be drawn from system,user,assistant,tool; got ${unknown.join(",")}.`,
      );
  }
  const normalized = enabled.size === ROLES.length ? "all" : ROLES.filter((r) => enabled.has(r)).join(",");
  return { normalized, overrides: ROLES.map((r) => `data.loss_mask.${r}=${enabled.has(r)}`) };
}

/** `option` as a message names it: `--pack-function` at the command, `packFunction` from code. */
function refuseWith(overrides: Map<string, string>, option: string, keys: string[]): void {
  const clash = keys.filter((k) => overrides.has(k)).sort();
  if (clash.length > 0)
    throw new SftRefusal(
      `${option} cannot be combined with ${opt("overrides", clash.map((k) => `${k}=...`).join(", "))}.`,
    );
}

/** max_steps (and what follows from it) from a number of examples or of batch-size-1 micro-steps. */
function maxStepsPlan(
  flags: PlanFlags,
  config: TomlTable,
  overrides: Map<string, string>,
  generated: string[],
) {
  if (flags.targetExamples !== undefined && flags.targetMicroSteps !== undefined)
    throw new SftRefusal(`${opt("targetExamples")} and ${opt("targetMicroSteps")} cannot be combined.`);
  const flag = opt(flags.targetExamples !== undefined ? "targetExamples" : "targetMicroSteps");
  const target = flags.targetExamples ?? flags.targetMicroSteps;
  if (target === undefined) return null;
  refuseWith(overrides, flag, ["max_steps"]);
  const n = positiveInt(target, flag);
  const batch = dataBatchSize(config, overrides);
  // Examples round up (every example is seen); micro-steps drop the last partial accumulation,
  // as the historical custom trainer's max_steps counted micro-batches.
  const steps = flags.targetExamples !== undefined ? Math.ceil(n / batch) : Math.floor(n / batch);
  if (steps <= 0)
    throw new SftRefusal(
      `${opt("targetMicroSteps")} must cover at least one effective Prime-RL batch (${n} < ${batch}).`,
    );
  generated.push(`max_steps=${steps}`);
  if (flags.syncSchedulerToMaxSteps) {
    refuseWith(overrides, opt("syncSchedulerToMaxSteps"), ["scheduler.decay_steps"]);
    generated.push(`scheduler.decay_steps=${steps}`);
  }
  return {
    target_examples: flags.targetExamples ?? null,
    target_micro_steps: flags.targetMicroSteps ?? null,
    data_batch_size: batch,
    derived_max_steps: steps,
    effective_train_examples: steps * batch,
    unapplied_micro_steps: flags.targetMicroSteps !== undefined ? n - steps * batch : null,
  };
}

/**
 * The generated overrides and the exposure plan (null when no first-class flag generated any,
 * as upstream leaves the plan out then). Throws on every combination upstream refuses.
 */
export function exposurePlan(flags: PlanFlags, config: TomlTable): ExposurePlan | null {
  const overrides = overrideMap(flags.overrides);
  const generated: string[] = [];
  const steps = maxStepsPlan(flags, config, overrides, generated);

  if (flags.syncCkptToMaxSteps) {
    if (steps === null)
      throw new SftRefusal(
        `${opt("syncCkptToMaxSteps")} requires ${opt("targetExamples")} or ${opt("targetMicroSteps")}.`,
      );
    refuseWith(overrides, opt("syncCkptToMaxSteps"), ["ckpt.interval", "ckpt.keep_interval"]);
    generated.push(
      `ckpt.interval=${steps.derived_max_steps}`,
      `ckpt.keep_interval=${steps.derived_max_steps}`,
    );
  }

  let packFunction: string | null = null;
  if (flags.packFunction !== undefined) {
    if (flags.packFunction !== "cat" && flags.packFunction !== "stack")
      throw new SftRefusal(`${opt("packFunction")} must be either 'cat' or 'stack'.`);
    refuseWith(overrides, opt("packFunction"), ["data.pack_function"]);
    packFunction = flags.packFunction;
    generated.push(`data.pack_function=${packFunction}`);
  }

  let lossMask: string | null = null;
  if (flags.lossMask !== undefined) {
    refuseWith(
      overrides,
      opt("lossMask"),
      ROLES.map((r) => `data.loss_mask.${r}`),
    );
    const mask = lossMaskOverrides(flags.lossMask);
    lossMask = mask.normalized;
    generated.push(...mask.overrides);
  }

  let modelAttn: string | null = null;
  if (flags.modelAttn !== undefined) {
    modelAttn = flags.modelAttn.trim();
    if (!modelAttn) throw new SftRefusal(`${opt("modelAttn")} must be non-empty.`);
    refuseWith(overrides, opt("modelAttn"), ["model.attn"]);
    generated.push(`model.attn=${modelAttn}`);
  }

  let rendererMode: string | null = null;
  if (flags.rendererMode !== undefined) {
    rendererMode = flags.rendererMode.trim().toLowerCase().replaceAll("_", "-");
    if (rendererMode !== "none")
      throw new SftRefusal(`${opt("rendererMode")} currently supports only 'none'.`);
    refuseWith(
      overrides,
      opt("rendererMode"),
      [...overrides.keys()].filter((k) => k === "renderer" || k.startsWith("renderer.")),
    );
    generated.push("renderer=None");
  }

  const effective = overrideMap([...flags.overrides, ...generated]);
  refuseUnsafeStackFlashAttn(flags, config, effective);
  refuseSampleMeanMisfit(flags, config, effective);
  if (generated.length === 0) return null;
  return {
    target_examples: steps?.target_examples ?? null,
    target_micro_steps: steps?.target_micro_steps ?? null,
    data_batch_size: steps?.data_batch_size ?? null,
    derived_max_steps: steps?.derived_max_steps ?? null,
    effective_train_examples: steps?.effective_train_examples ?? null,
    unapplied_micro_steps: steps?.unapplied_micro_steps ?? null,
    sync_scheduler_to_max_steps: steps !== null && flags.syncSchedulerToMaxSteps,
    sync_ckpt_to_max_steps: flags.syncCkptToMaxSteps,
    pack_function: packFunction,
    loss_mask: lossMask,
    model_attn: modelAttn,
    renderer_mode: rendererMode,
    generated_overrides: generated,
  };
}

export type LossNormalization = "token_mean" | "sample_mean";

/** The names upstream takes for each kind; null: not given (Prime-RL's own, token_mean). */
export function lossNormalization(raw: string | undefined): LossNormalization | null {
  if (raw === undefined) return null;
  const v = raw.trim().toLowerCase().replaceAll("-", "_");
  if (["token", "token_mean", "token_weighted"].includes(v)) return "token_mean";
  if (["sample", "sample_mean", "row", "row_mean"].includes(v)) return "sample_mean";
  throw new SftRefusal(`${opt("lossNormalization")} must be 'token_mean' or 'sample_mean'`);
}

/**
 * A per-row mean loss only means something when a batch row is one training example and is whole
 * on one rank: stack packing, no context parallelism, and a loss that is not fused into the
 * kernel (the per-token losses must be there to be averaged). Upstream's rules and words.
 */
function refuseSampleMeanMisfit(flags: PlanFlags, config: TomlTable, effective: Map<string, string>): void {
  if (lossNormalization(flags.lossNormalization) !== "sample_mean") return;
  if (asString(effectiveValue(config, effective, "data.pack_function")) !== "stack")
    throw new SftRefusal(
      `${opt("lossNormalization", "sample_mean")} requires data.pack_function=stack ` +
        "so each batch row remains one original training example",
    );
  const cp = effectiveValue(config, effective, "model.cp");
  if (positiveInt(cp ?? 1, "model.cp") !== 1)
    throw new SftRefusal(
      `${opt("lossNormalization", "sample_mean")} requires model.cp=1 because sequence-sharded rows ` +
        "cannot be reduced to per-sample means by the BenchFlow Prime-RL wrapper",
    );
  const lossImpl = asString(effectiveValue(config, effective, "loss_impl")) ?? "torch";
  if (lossImpl === "liger_fused" || lossImpl === "quack_fused")
    throw new SftRefusal(
      `${opt("lossNormalization", "sample_mean")} does not support fused Prime-RL loss_impl='${lossImpl}'; ` +
        "use loss_impl=torch or loss_impl=liger",
    );
}

/** Stack packing + Qwen3.5 + flash attention fails inside Prime-RL's varlen kernels (seen on H100). */
function refuseUnsafeStackFlashAttn(
  flags: PlanFlags,
  config: TomlTable,
  effective: Map<string, string>,
): void {
  if (flags.allowUnsafeStackFlashAttn) return;
  const pack = asString(effectiveValue(config, effective, "data.pack_function"));
  const model = asString(effectiveValue(config, effective, "model.name"));
  const attn = asString(effectiveValue(config, effective, "model.attn"));
  const qwen35 = model?.toLowerCase().replaceAll("_", "-").startsWith("qwen/qwen3.5-") ?? false;
  if (pack === "stack" && qwen35 && ["flash_attention_2", "flash_attention_3", "fa4"].includes(attn ?? ""))
    throw new SftRefusal(
      "Prime-RL stack packing with Qwen/Qwen3.5-* and flash attention is blocked because it can " +
        "misinterpret padded position_ids as packed sequence starts and fail inside Qwen3.5 varlen " +
        `kernels. Use ${opt("modelAttn", "sdpa")} or ${opt("overrides", "model.attn=sdpa")}, or pass ` +
        `${opt("allowUnsafeStackFlashAttn")} to run the native Prime-RL mode anyway.`,
    );
}
