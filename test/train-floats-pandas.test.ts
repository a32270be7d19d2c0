// Rows and stream records of a group whose rewards are all 0 or 1, loaded with pandas the way a
// trainer loads them: reward and advantage must come out float64 without a cast, as upstream's rows
// (which Python writes as `1.0`) do. A column of `1`/`0` comes out int64, and Arrow and HF datasets
// then refuse to concatenate it with a float shard.
//
// pandas.read_json's default dtype=True turns any all-integral float column into int64 (it does so
// to upstream's `1.0` rows too), so the rows are read with dtype=False: the types the JSON itself
// carries, which is what Arrow and HF datasets see. Needs pandas (CI installs Debian's python3-pandas).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { writeGroup } from "../src/jobs-dir/testing/job-builder.js";
import { bench, tempDir } from "./testing/bench.js";

/** The first python3 with pandas: the one on PATH, else Debian's (a pyenv shim may shadow it). */
function pythonWithPandas(): string | null {
  for (const py of ["python3", "/usr/bin/python3"]) {
    const r = spawnSync(py, ["-c", "import pandas"], { encoding: "utf8" });
    if (r.status === 0) return py;
  }
  return null;
}

const PYTHON = pythonWithPandas();
const skip = PYTHON
  ? false
  : "python3 -c 'import pandas' fails: install python3-pandas (Debian) to run the pandas checks";

/** dtype of each named column (dotted names reach into the group block), as pandas loads the file. */
function dtypes(file: string, columns: string[]): Record<string, string> {
  const script = [
    "import json, sys, pandas as pd",
    "df = pd.read_json(sys.argv[1], lines=True, dtype=False)",
    "flat = pd.json_normalize([json.loads(l) for l in open(sys.argv[1]) if l.strip()])",
    "out = {}",
    "for c in sys.argv[2:]:",
    "    src = df if c in df.columns else flat",
    "    out[c] = str(src[c].dtype) if c in src.columns else 'missing'",
    "print(json.dumps(out))",
  ].join("\n");
  const r = spawnSync(PYTHON as string, ["-c", script, file, ...columns], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const FLOAT_COLUMNS = ["reward", "advantage", "group.mean", "group.std", "group.eps"];
const float64 = (cols: string[]) => Object.fromEntries(cols.map((c) => [c, "float64"]));

const roots: string[] = [];
after(() => Promise.all(roots.map((r) => fs.rm(r, { recursive: true, force: true }))));

describe("rows and records of 0/1 rewards load as float64 in pandas", { skip }, () => {
  /** Two groups of four: all passed, all failed (advantages 0, std 0): every number is integral. */
  async function jobs(): Promise<string> {
    const root = await tempDir("floats");
    roots.push(root);
    writeGroup(path.join(root, "jobs"), { task: "pass", rewards: [1, 1, 1, 1] });
    writeGroup(path.join(root, "jobs"), { task: "fail", rewards: [0, 0, 0, 0] });
    return root;
  }

  for (const format of ["prime-sft", "trl-sft"]) {
    it(`bench train convert --format ${format}`, async () => {
      const root = await jobs();
      const out = path.join(root, "rows.jsonl");
      const r = await bench([
        "train",
        "convert",
        path.join(root, "jobs/bench-agent"),
        "--out",
        out,
        "--format",
        format,
        "--group-advantage",
        "grpo",
        "--group-by",
        "task,agent,model",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const text = await fs.readFile(out, "utf8");
      assert.equal(text.trim().split("\n").length, 8);
      const cols = format === "prime-sft" ? [...FLOAT_COLUMNS, "score"] : FLOAT_COLUMNS;
      assert.deepEqual(dtypes(out, [...cols, "group.rollouts", "exchange_index"]), {
        ...float64(cols),
        // Counts stay integers.
        "group.rollouts": "int64",
        exchange_index: "int64",
      });
    });
  }

  it("bench train stream --no-follow --group-size N", async () => {
    const root = await jobs();
    const r = await bench([
      "train",
      "stream",
      path.join(root, "jobs/bench-agent"),
      "--no-follow",
      "--group-size",
      "4",
      "--group-by",
      "task,agent,model",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = path.join(root, "records.jsonl");
    await fs.writeFile(out, r.stdout);
    assert.equal(r.stdout.trim().split("\n").length, 8);
    assert.deepEqual(dtypes(out, ["reward", "advantage", "group_mean", "group_std", "group_rollouts"]), {
      reward: "float64",
      advantage: "float64",
      group_mean: "float64",
      group_std: "float64",
      group_rollouts: "int64",
    });
  });
});

describe("the manifest is written as upstream's Python writes it", { skip: PYTHON ? false : skip }, () => {
  it("json.dumps(json.load(f), indent=2, sort_keys=True) gives back the same bytes", async () => {
    const root = await tempDir("manifest");
    roots.push(root);
    writeGroup(path.join(root, "jobs"), { task: "t", rewards: [0, 1, 1] });
    writeGroup(path.join(root, "jobs"), { task: "u", rewards: [1, 1, null] });
    const manifest = path.join(root, "stats.json");
    const r = await bench([
      "train",
      "convert",
      path.join(root, "jobs/bench-agent"),
      "--out",
      path.join(root, "rows.jsonl"),
      "--manifest",
      manifest,
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
    ]);
    assert.equal(r.code, 0, r.stderr);
    // Python keeps 1.0 a float and 1 an int when it reads, so a byte-equal round trip pins both.
    const py = spawnSync(
      PYTHON as string,
      [
        "-c",
        "import json, sys; t = open(sys.argv[1]).read(); sys.stdout.write(json.dumps(json.loads(t), indent=2, sort_keys=True) + '\\n')",
        manifest,
      ],
      { encoding: "utf8" },
    );
    assert.equal(py.status, 0, py.stderr);
    assert.equal(await fs.readFile(manifest, "utf8"), py.stdout);
  });
});
