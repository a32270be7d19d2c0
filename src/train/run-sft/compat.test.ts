// The env0-mobile300-pr828 preset: what upstream's _apply_compat_profile fills in and refuses
// (src/benchflow/training/backends/prime_rl.py; its test
// test_train_run_sft_prime_rl_mobile300_requires_sample_mean pins the loss refusal).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { nameFlags } from "../../cli/option-flags.js";
import { nameOptionsWith } from "../../options.js";
import { applyCompatProfile, compatProfile, type ProfileFlags } from "./compat.js";
import { SftRefusal } from "./refusal.js";

// The refusals read as the command words them (upstream's words): the flags, as `bench` names them.
before(() => nameFlags());
after(() => nameOptionsWith(null));

const flags = (f: Partial<ProfileFlags> = {}): ProfileFlags => ({
  syncSchedulerToMaxSteps: true,
  syncCkptToMaxSteps: false,
  allowUnsafeStackFlashAttn: false,
  ...f,
});

const refused = (f: Partial<ProfileFlags>, re: RegExp) =>
  assert.throws(
    () => applyCompatProfile(flags(f), "env0-mobile300-pr828"),
    (e) => e instanceof SftRefusal && re.test(e.message),
  );

describe("--compat-profile env0-mobile300-pr828", () => {
  it("fills in the historical run's settings", () => {
    const o = applyCompatProfile(flags(), "env0-mobile300-pr828");
    assert.deepEqual(o, {
      syncSchedulerToMaxSteps: true,
      syncCkptToMaxSteps: true,
      allowUnsafeStackFlashAttn: false,
      compatProfile: "env0-mobile300-pr828",
      targetExamples: undefined,
      targetMicroSteps: 300,
      packFunction: "stack",
      lossMask: "all",
      lossNormalization: "sample_mean",
      modelAttn: "sdpa",
      rendererMode: "none",
      toolDefsMode: "omit",
      chatTemplateKwargs: [],
      messageTailTruncation: "custom-trainer-pretokenized",
    });
  });

  it("takes upstream's aliases and refuses any other name", () => {
    for (const name of ["ENV0_MOBILE300_PR828", "env-0-mobile300-pr828", "env0-mobile300-custom-sft"])
      assert.equal(compatProfile(name), "env0-mobile300-pr828");
    assert.equal(compatProfile(undefined), null);
    assert.throws(
      () => compatProfile("mobile"),
      /Unsupported --compat-profile 'mobile'; supported profiles: env-0-/,
    );
    assert.throws(() => compatProfile("  "), /must be non-empty/);
  });

  it("no profile: the flags as they were", () => {
    const f = flags({ packFunction: "cat" });
    assert.equal(applyCompatProfile(f, undefined), f);
  });

  it("a flag that agrees is kept; one that contradicts is refused in upstream's words", () => {
    const o = applyCompatProfile(
      flags({ targetExamples: 300, packFunction: "STACK", lossNormalization: "sample", modelAttn: "sdpa" }),
      "env0-mobile300-pr828",
    );
    assert.equal(o.targetExamples, undefined);
    assert.equal(o.targetMicroSteps, 300);
    assert.equal(o.packFunction, "stack");
    refused(
      { lossNormalization: "token_mean" },
      /requires --loss-normalization sample_mean; got 'token_mean'$/,
    );
    refused({ targetExamples: 200 }, /requires --target-examples=300; got 200$/);
    refused({ targetMicroSteps: 30 }, /requires --target-micro-steps=300; got 30$/);
    refused({ packFunction: "cat" }, /requires --pack-function='stack'; got 'cat'$/);
    refused({ lossMask: "assistant" }, /requires --loss-mask='all'; got 'assistant'$/);
    refused({ modelAttn: "flash_attention_2" }, /requires --model-attn='sdpa'/);
    refused({ rendererMode: "jinja" }, /requires --renderer-mode='none'/);
    refused({ syncSchedulerToMaxSteps: false }, /requires --sync-scheduler-to-max-steps$/);
    refused({ chatTemplateKwargs: ["enable_thinking=false"] }, /does not support --chat-template-kwarg$/);
  });
});
