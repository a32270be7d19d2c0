import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { renderSchemas, SCHEMAS_DIR } from "../../scripts/gen-schemas.js";
import { writeGroup } from "../jobs-dir/testing/job-builder.js";
import { convertJob } from "../train/convert/convert.js";
import { streamRollouts } from "../train/stream/stream.js";
import { StreamRecord } from "./rollout-stream.js";
import { Manifest } from "./train-manifest.js";
import { GroupBlock, PrimeSftRow, TokensRow, TrlSftRow } from "./train-rows.js";

describe("schemas/*.json", () => {
  it("equal what scripts/gen-schemas.ts generates (run it after changing a schema)", () => {
    const expected = renderSchemas();
    const committed = fs.readdirSync(SCHEMAS_DIR).filter((f) => f.endsWith(".json"));
    for (const name of Object.keys(expected))
      assert.ok(committed.includes(name), `schemas/${name} is missing`);
    for (const [name, text] of Object.entries(expected)) {
      assert.equal(fs.readFileSync(path.join(SCHEMAS_DIR, name), "utf8"), text, `schemas/${name} is stale`);
    }
  });

  it("describe the group block with the seed's fields and upstream's by, key and std_ddof, in upstream's order", () => {
    const schema = JSON.parse(renderSchemas()["train-group-block.schema.json"] ?? "{}");
    assert.deepEqual(schema.required, [
      "id",
      "by",
      "key",
      "normalisation",
      "formula",
      "rollouts",
      "scored",
      "mean",
      "std",
      "std_ddof",
      "eps",
    ]);
    assert.ok(
      GroupBlock.safeParse({
        id: "task=x",
        by: ["task"],
        key: { task: "x" },
        normalisation: "grpo",
        formula: "f",
        rollouts: 1,
        scored: 1,
        mean: 1,
        std: null,
        std_ddof: 1,
        eps: 0.0001,
        error: "timeout",
      }).success,
    );
    assert.equal(PrimeSftRow.safeParse({ messages: [] }).success, false);
  });
});

describe("what convert and stream write matches the schemas", () => {
  it("rows of every format, the manifest and stream records", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bf-schemas-"));
    try {
      writeGroup(root, {
        task: "t",
        rewards: [0, 1, 0],
        errors: ["timeout", null, null],
        tokens: true,
        wire: "anthropic-messages",
      });
      const schemas = { "prime-sft": PrimeSftRow, "trl-sft": TrlSftRow, tokens: TokensRow } as const;
      for (const [format, schema] of Object.entries(schemas)) {
        const out = path.join(root, `${format}.jsonl`);
        const res = await convertJob({
          jobs: root,
          out,
          format: format as keyof typeof schemas,
          groupAdvantage: "grpo",
          groupBy: "task",
        });
        assert.equal(res.rows, 3);
        Manifest.parse(res.manifest);
        for (const line of fs.readFileSync(out, "utf8").trim().split("\n")) schema.parse(JSON.parse(line));
      }
      for await (const record of streamRollouts(root, { follow: false, groupSize: 3, groupBy: "task" }))
        StreamRecord.parse(record);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
