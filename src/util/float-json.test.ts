// The float serializer against what Python's json.dumps writes for the same values (the expected
// strings below are json.dumps output, pasted from python3), and against JSON.stringify for
// everything that is not a float field.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { SUMMARY_FLOATS, summarize } from "../job/summary.js";
import type { RolloutResult } from "../schemas/result.js";
import { FLOAT_FIELDS, floatJson, floatText } from "./float-json.js";
import { writeJsonAtomic } from "./fs.js";

describe("floatJson", () => {
  it("writes a row's float fields as Python does, integers staying integers", () => {
    const row = {
      rollout: "a",
      reward: 1,
      rewards: { reward: 0, steps: { a: 1 } },
      rollouts: 4,
      mean: 0.5,
      std: null,
      std_ddof: 1,
      eps: 0.0001,
    };
    // python3: json.dumps({...}, separators=(",", ":")) with reward=1.0, rewards={"reward":0.0,...}
    assert.equal(
      floatJson(row),
      '{"rollout":"a","reward":1.0,"rewards":{"reward":0.0,"steps":{"a":1.0}},"rollouts":4,"mean":0.5,"std":null,"std_ddof":1,"eps":0.0001}',
    );
  });

  it("indent and sort_keys give Python's indent=2, sort_keys=True layout", () => {
    const value = { b: { mean: 1, z: [1, 2] }, a: [], c: {} };
    assert.equal(
      floatJson(value, { indent: 2, sortKeys: true }),
      '{\n  "a": [],\n  "b": {\n    "mean": 1.0,\n    "z": [\n      1,\n      2\n    ]\n  },\n  "c": {}\n}',
    );
  });

  it("floats: -0.0, exponents, and non-finite numbers become null", () => {
    assert.deepEqual([-0, 1e21, 3, 0.1 + 0.2, Number.NaN, Number.POSITIVE_INFINITY].map(floatText), [
      "-0.0",
      "1e+21",
      "3.0",
      "0.30000000000000004",
      "null",
      "null",
    ]);
    // JSON.stringify writes a NaN reward as null too; a float field never writes NaN.
    assert.equal(floatJson({ reward: Number.NaN, advantage: -0.5 }), '{"reward":null,"advantage":-0.5}');
  });

  it("every number under a float field is a float: logprobs lists, advantage vectors", () => {
    const record = {
      token_capture: { calls: 3, unavailable: { logprobs: 3 } },
      calls: [{ index: 0, prompt_token_ids: [60, 124], completions: [{ index: 0, logprobs: [0, -0.25] }] }],
      sequences: [{ completion_ids: [1, 2], completion_mask: [0, 1], completion_logprobs: [0, -1] }],
      advantage_vector: { reward: 0, tests: 1 },
    };
    assert.equal(
      floatJson(record),
      '{"token_capture":{"calls":3,"unavailable":{"logprobs":3}},"calls":[{"index":0,"prompt_token_ids":[60,124],"completions":[{"index":0,"logprobs":[0.0,-0.25]}]}],' +
        '"sequences":[{"completion_ids":[1,2],"completion_mask":[0,1],"completion_logprobs":[0.0,-1.0]}],' +
        '"advantage_vector":{"reward":0.0,"tests":1.0}}',
    );
  });

  it("the rollout's own data is written as it is: a tool argument named reward keeps its integer", () => {
    const row = {
      messages: [
        {
          role: "assistant",
          tool_calls: [{ function: { name: "set", arguments: { reward: 1, score: 2 } } }],
        },
      ],
      tools: [{ function: { parameters: { properties: { mean: { default: 3 } } } } }],
      token_usage: { n_input_tokens: 10, cost_usd: 0 },
      reward: 0,
    };
    const text = floatJson(row);
    assert.equal(text, JSON.stringify({ ...row, reward: "@" }).replace('"@"', "0.0"));
  });

  it("everything else is JSON.stringify's: undefined, toJSON, nested arrays, strings, key order", () => {
    const value = {
      z: 1,
      a: undefined,
      when: new Date(0),
      list: [undefined, () => 1, [null, 'x\n"y"']],
      fn: () => 1,
      nested: { ok: true, n: 2.5, deep: [{}] },
    };
    assert.equal(floatJson(value), JSON.stringify(value));
    assert.equal(floatJson(value, { indent: 2 }), JSON.stringify(value, null, 2));
    assert.throws(() => floatJson({ n: 1n }), TypeError);
  });

  it("result.json and summary.json name their own float fields", () => {
    assert.equal(
      floatJson({ mean_reward: 1, total: 2 }, { floats: new Set(["mean_reward"]) }),
      '{"mean_reward":1.0,"total":2}',
    );
    assert.ok(FLOAT_FIELDS.has("reward") && !FLOAT_FIELDS.has("rollouts"));
  });

  it("summary.json: mean_reward and score_ratio of a job that passed everything are 1.0, counts integers", async () => {
    const passed = {
      rewards: { reward: 1 },
      error_category: null,
      verifier_error_category: null,
    } as RolloutResult;
    const summary = summarize([passed, passed], {
      jobName: "j",
      agent: "oracle",
      model: null,
      environment: "namespace",
      concurrency: 1,
      startedAt: new Date(0),
    });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-float-json-"));
    try {
      const file = path.join(dir, "summary.json");
      await writeJsonAtomic(file, summary, { floats: SUMMARY_FLOATS });
      const text = await fs.readFile(file, "utf8");
      assert.match(text, /\n {2}"mean_reward": 1\.0,\n/);
      assert.match(text, /\n {2}"score_ratio": 1\.0,\n/);
      assert.match(text, /\n {2}"passed": 2,\n/);
      assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(summary)));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
