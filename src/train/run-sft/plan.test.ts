// The numbers are upstream's own (tests/test_train_cli.py test_train_run_sft_*): the same flags
// and config must give the same Prime-RL arguments and exposure plan.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parse } from "smol-toml";
import { nameFlags } from "../../cli/option-flags.js";
import { nameOptionsWith } from "../../options.js";
import { exposurePlan, lossMaskOverrides, overrideArgs, type PlanFlags } from "./plan.js";
import { SftRefusal } from "./refusal.js";

// The refusals read as the command words them (upstream's words): the flags, as `bench` names them.
before(() => nameFlags());
after(() => nameOptionsWith(null));

const flags = (f: Partial<PlanFlags>): PlanFlags => ({
  overrides: [],
  syncSchedulerToMaxSteps: true,
  syncCkptToMaxSteps: false,
  allowUnsafeStackFlashAttn: false,
  ...f,
});

const CONFIG = parse(
  'max_steps = 300\n[data]\nbatch_size = 8\npack_function = "cat"\n[scheduler]\ndecay_steps = 300\n',
);

describe("run sft: the Prime-RL overrides", () => {
  it("--target-examples rounds max_steps up and syncs the scheduler", () => {
    const plan = exposurePlan(flags({ targetExamples: 300, packFunction: "stack" }), CONFIG);
    assert.deepEqual(plan, {
      data_batch_size: 8,
      derived_max_steps: 38,
      effective_train_examples: 304,
      generated_overrides: ["max_steps=38", "scheduler.decay_steps=38", "data.pack_function=stack"],
      loss_mask: null,
      model_attn: null,
      pack_function: "stack",
      renderer_mode: null,
      sync_ckpt_to_max_steps: false,
      sync_scheduler_to_max_steps: true,
      target_examples: 300,
      target_micro_steps: null,
      unapplied_micro_steps: null,
    });
  });

  it("--target-micro-steps drops the last partial accumulation", () => {
    const plan = exposurePlan(flags({ targetMicroSteps: 300 }), CONFIG);
    assert.equal(plan?.derived_max_steps, 37);
    assert.equal(plan?.effective_train_examples, 296);
    assert.equal(plan?.unapplied_micro_steps, 4);
    assert.deepEqual(plan?.generated_overrides, ["max_steps=37", "scheduler.decay_steps=37"]);
    assert.throws(
      () => exposurePlan(flags({ targetMicroSteps: 5 }), CONFIG),
      /must cover at least one effective Prime-RL batch \(5 < 8\)/,
    );
  });

  it("an --override data.batch_size wins over the config", () => {
    const config = parse("max_steps = 300\n[data]\nbatch_size = 1\n");
    const plan = exposurePlan(
      flags({ targetExamples: 300, syncSchedulerToMaxSteps: false, overrides: ["data.batch_size=8"] }),
      config,
    );
    assert.deepEqual(plan?.generated_overrides, ["max_steps=38"]);
    assert.equal(plan?.sync_scheduler_to_max_steps, false);
    assert.deepEqual(overrideArgs(["data.batch_size=8", ...(plan?.generated_overrides ?? [])]).slice(-2), [
      "--max_steps",
      "38",
    ]);
  });

  it("--loss-mask all and --model-attn sdpa generate one override per role, in role order", () => {
    const plan = exposurePlan(
      flags({ targetExamples: 300, packFunction: "stack", lossMask: "all", modelAttn: "sdpa" }),
      CONFIG,
    );
    assert.deepEqual(plan?.generated_overrides.slice(3), [
      "data.loss_mask.system=true",
      "data.loss_mask.user=true",
      "data.loss_mask.assistant=true",
      "data.loss_mask.tool=true",
      "model.attn=sdpa",
    ]);
    assert.equal(plan?.loss_mask, "all");
    assert.deepEqual(lossMaskOverrides("Tool, assistant").normalized, "assistant,tool");
    assert.throws(() => lossMaskOverrides("assistant,critic"), /got critic/);
  });

  it("no first-class flag: no plan, the overrides pass through as --KEY VALUE", () => {
    assert.equal(exposurePlan(flags({ overrides: ["model.name=Qwen/Qwen3.5-9B"] }), CONFIG), null);
    assert.deepEqual(overrideArgs(["model.name=Qwen/Qwen3.5-9B", "a.b=x=y"]), [
      "--model.name",
      "Qwen/Qwen3.5-9B",
      "--a.b",
      "x=y",
    ]);
    assert.throws(() => overrideArgs(["max_steps"]), /--override must be KEY=VALUE/);
    assert.throws(() => overrideArgs([" =1"]), /non-empty key/);
  });

  it("refuses what upstream refuses", () => {
    const refuse = (f: Partial<PlanFlags>, re: RegExp, config = CONFIG) =>
      assert.throws(() => exposurePlan(flags(f), config), re);
    refuse({ targetExamples: 300, overrides: ["max_steps=5"] }, /--target-examples cannot be combined/);
    refuse({ targetExamples: 3, targetMicroSteps: 3 }, /cannot be combined/);
    refuse({ targetExamples: 3 }, /requires data.batch_size/, parse("max_steps = 1\n"));
    refuse({ targetExamples: 3, overrides: ["scheduler.decay_steps=9"] }, /--sync-scheduler-to-max-steps/);
    refuse({ syncCkptToMaxSteps: true }, /requires --target-examples/);
    refuse({ lossMask: "all", overrides: ["data.loss_mask.user=false"] }, /data.loss_mask.user=\.\.\./);
    refuse({ packFunction: "zip" }, /'cat' or 'stack'/);
    refuse({ rendererMode: "jinja" }, /only 'none'/);
    const qwen = parse('[model]\nname = "Qwen/Qwen3.5-9B"\nattn = "flash_attention_2"\n');
    refuse({ packFunction: "stack" }, /stack packing with Qwen\/Qwen3.5/, qwen);
    assert.notEqual(
      exposurePlan(flags({ packFunction: "stack", allowUnsafeStackFlashAttn: true }), qwen),
      null,
    );
    assert.notEqual(exposurePlan(flags({ packFunction: "stack", modelAttn: "sdpa" }), qwen), null);
  });

  it("every refusal, of the config or of a flag combination, is one SftRefusal (exit 1, as upstream's)", () => {
    const qwen = parse('[model]\nname = "Qwen/Qwen3.5-9B"\nattn = "fa4"\n');
    assert.throws(() => exposurePlan(flags({ packFunction: "stack" }), qwen), SftRefusal);
    assert.throws(
      () => exposurePlan(flags({ targetExamples: 3 }), parse("[data]\nbatch_size = 0\n")),
      SftRefusal,
    );
    assert.throws(() => exposurePlan(flags({ targetExamples: 3 }), parse("")), SftRefusal);
    assert.throws(() => exposurePlan(flags({ packFunction: "zip" }), CONFIG), SftRefusal);
    assert.throws(
      () => exposurePlan(flags({ targetExamples: 3, overrides: ["max_steps=3"] }), CONFIG),
      SftRefusal,
    );
  });

  it("sample_mean needs stack packing, model.cp=1 and an unfused loss, as upstream checks", () => {
    const refuse = (f: Partial<PlanFlags>, config: string, re: RegExp) =>
      assert.throws(
        () => exposurePlan(flags({ lossNormalization: "sample_mean", ...f }), parse(config)),
        (e) => {
          assert.ok(e instanceof SftRefusal);
          assert.match(e.message, re);
          return true;
        },
      );
    refuse({}, '[data]\npack_function = "cat"\n', /sample_mean requires data\.pack_function=stack/);
    refuse({}, "", /sample_mean requires data\.pack_function=stack/);
    // An alias, and an override that undoes the config's stack.
    refuse(
      { lossNormalization: "row-mean", overrides: ["data.pack_function=cat"] },
      '[data]\npack_function = "stack"\n',
      /pack_function=stack/,
    );
    refuse({ packFunction: "stack" }, "[model]\ncp = 2\n", /requires model\.cp=1/);
    refuse(
      { packFunction: "stack", overrides: ["loss_impl=liger_fused"] },
      "",
      /fused Prime-RL loss_impl='liger_fused'/,
    );
    // Stack from the flag, from an override, or from the config: all accepted.
    assert.equal(
      exposurePlan(flags({ lossNormalization: "sample_mean", packFunction: "stack" }), parse(""))
        ?.pack_function,
      "stack",
    );
    assert.equal(
      exposurePlan(
        flags({ lossNormalization: "sample", overrides: ["data.pack_function=stack"] }),
        parse(""),
      ),
      null,
    );
    assert.equal(
      exposurePlan(
        flags({ lossNormalization: "sample_mean" }),
        parse('[data]\npack_function = "stack"\n[model]\ncp = 1\n'),
      ),
      null,
    );
    // token_mean is Prime-RL's own: nothing to check.
    assert.equal(
      exposurePlan(flags({ lossNormalization: "token_mean" }), parse('[data]\npack_function = "cat"\n')),
      null,
    );
    assert.throws(
      () => exposurePlan(flags({ lossNormalization: "median" }), parse("")),
      /'token_mean' or 'sample_mean'/,
    );
  });

  it("--sync-ckpt-to-max-steps sets both checkpoint keys", () => {
    const plan = exposurePlan(flags({ targetExamples: 16, syncCkptToMaxSteps: true }), CONFIG);
    assert.deepEqual(plan?.generated_overrides, [
      "max_steps=2",
      "scheduler.decay_steps=2",
      "ckpt.interval=2",
      "ckpt.keep_interval=2",
    ]);
  });
});
