// `--compat-profile env0-mobile300-pr828`: upstream's preset that reproduces one historical
// custom-trainer run on Prime-RL (300 batch-size-1 micro-steps, stack packing, loss on every
// role, per-row mean loss, sdpa, no renderer, tool_defs dropped, rows pre-tokenized). A flag the
// user also gave must agree with the preset; the preset then fills in the rest. Upstream's rules
// and words, so a refused combination reads the same from either bench.

import { opt } from "../../options.js";
import { lossNormalization, type PlanFlags } from "./plan.js";
import { SftRefusal } from "./refusal.js";

export const MOBILE300_PROFILE = "env0-mobile300-pr828";

const ALIASES: Record<string, string> = {
  [MOBILE300_PROFILE]: MOBILE300_PROFILE,
  "env-0-mobile300-pr828": MOBILE300_PROFILE,
  "env0-mobile300-custom-sft": MOBILE300_PROFILE,
  "env-0-mobile300-custom-sft": MOBILE300_PROFILE,
};

/** The profile's one name, from any of its aliases; null when none was asked for. */
export function compatProfile(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const value = raw.trim().toLowerCase().replaceAll("_", "-");
  if (!value) throw new SftRefusal(`${opt("compatProfile")} must be non-empty`);
  const name = ALIASES[value];
  if (name === undefined)
    throw new SftRefusal(
      `Unsupported ${opt("compatProfile")} '${raw}'; supported profiles: ${Object.keys(ALIASES).sort().join(", ")}`,
    );
  return name;
}

/** The flags a profile touches, besides PlanFlags' own. */
export interface ProfileFlags extends Omit<PlanFlags, "overrides"> {
  toolDefsMode?: string;
  chatTemplateKwargs?: readonly string[];
  messageTailTruncation?: string;
  compatProfile?: string;
}

/** Python's repr of what a user may pass: numbers bare, text in single quotes. */
function repr(v: string | number): string {
  return typeof v === "number" ? String(v) : `'${v}'`;
}

/** `option` as a message names it: `--pack-function` at the command, `packFunction` from code. */
function agree<T extends string | number>(value: T | undefined, required: T, option: string): T {
  if (value === undefined) return required;
  if (String(value).toLowerCase() !== String(required).toLowerCase())
    throw new SftRefusal(
      `${opt("compatProfile", MOBILE300_PROFILE)} requires ${option}=${repr(required)}; got ${repr(value)}`,
    );
  return required;
}

/** The flags with the profile applied; refuses a flag that contradicts it. */
export function applyCompatProfile<F extends ProfileFlags>(flags: F, raw: string | undefined): F {
  const profile = compatProfile(raw);
  if (profile === null) return flags;
  const p = opt("compatProfile", profile);
  if (!flags.syncSchedulerToMaxSteps) throw new SftRefusal(`${p} requires ${opt("syncSchedulerToMaxSteps")}`);
  if (flags.targetExamples !== undefined) agree(flags.targetExamples, 300, opt("targetExamples"));
  if ((flags.chatTemplateKwargs ?? []).length > 0)
    throw new SftRefusal(
      `${p} stages pre-tokenized custom-trainer samples and does not support ${opt("chatTemplateKwargs")}`,
    );
  const loss = lossNormalization(flags.lossNormalization);
  if (loss !== null && loss !== "sample_mean")
    throw new SftRefusal(`${p} requires ${opt("lossNormalization", "sample_mean")}; got '${loss}'`);
  return {
    ...flags,
    compatProfile: profile,
    targetExamples: undefined,
    // 300 batch-size-1 micro-steps: the historical trainer counted micro-batches, not batches.
    targetMicroSteps: agree(flags.targetMicroSteps, 300, opt("targetMicroSteps")),
    syncCkptToMaxSteps: true,
    packFunction: agree(flags.packFunction, "stack", opt("packFunction")),
    lossMask: agree(flags.lossMask, "all", opt("lossMask")),
    lossNormalization: "sample_mean",
    modelAttn: agree(flags.modelAttn, "sdpa", opt("modelAttn")),
    rendererMode: agree(flags.rendererMode, "none", opt("rendererMode")),
    toolDefsMode: "omit",
    chatTemplateKwargs: [],
    messageTailTruncation: "custom-trainer-pretokenized",
  };
}
