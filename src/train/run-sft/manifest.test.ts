// command.txt and train-run.json are read by people and by upstream's tools: the quoting is
// Python's shlex.quote and the JSON is json.dumps(indent=2, sort_keys=True). The expected texts
// below are what Python 3.11 prints for the same inputs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { commandLine, manifestText, recordedEnvKeys, shellQuote, type TrainRunManifest } from "./manifest.js";

describe("run sft: command.txt and train-run.json text", () => {
  it("quotes as shlex.quote", () => {
    const cases: Array<[string, string]> = [
      ["", "''"],
      ["a b", "'a b'"],
      ["it's", `'it'"'"'s'`],
      ["Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-9B"],
      ["x=y,z:@%+", "x=y,z:@%+"],
      ["é", "'é'"],
      ["$HOME", "'$HOME'"],
    ];
    for (const [arg, quoted] of cases) assert.equal(shellQuote(arg), quoted, arg);
    assert.equal(
      commandLine(["uv", "run", "sft", "@", "/c.toml", "--note", "a b"]),
      "uv run sft @ /c.toml --note 'a b'",
    );
  });

  it("writes sorted keys, two-space indents and escaped non-ASCII", () => {
    const text = manifestText({ b: "é", a: [] } as unknown as TrainRunManifest);
    assert.equal(text, '{\n  "a": [],\n  "b": "\\u00e9"\n}\n');
  });

  it("records only credential names that are set and non-empty", () => {
    assert.deepEqual(recordedEnvKeys({ WANDB_API_KEY: "x", HF_TOKEN: "y", PRIME_API_KEY: "", OTHER: "z" }), [
      "HF_TOKEN",
      "WANDB_API_KEY",
    ]);
  });
});
