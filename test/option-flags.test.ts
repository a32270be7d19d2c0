// Every option a library message names has the flag the `bench` command spells for it, so a user at
// the command reads the flag they typed: the library spells no flag (src/cli/option-flags.ts does).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { flagOf, OPTION_FLAGS } from "../src/cli/option-flags.js";
import { libraryName, opt } from "../src/options.js";

const SRC = path.join(import.meta.dirname, "..", "src");

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "fixtures" && e.name !== "testing") out.push(...(await sourceFiles(p)));
    } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

describe("options named in messages", () => {
  it("the library names its own option, with the value as code writes it", () => {
    assert.equal(opt("trials"), "trials");
    assert.equal(opt("model", "vllm/x"), 'model: "vllm/x"');
    assert.equal(libraryName({ option: "policy.seed" }), "policy.seed");
  });

  it("the command's table gives the flag, and the value after it", () => {
    assert.equal(flagOf({ option: "trials" }), "--trials");
    assert.equal(flagOf({ option: "model", value: "vllm/x" }), "-m vllm/x");
    assert.equal(flagOf({ option: "not-an-option" }), undefined);
  });

  it("every option a message in src/ names by its literal key has a flag in the command's table", async () => {
    const missing: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      if (file.includes(`${path.sep}cli${path.sep}`)) continue;
      const text = await fs.readFile(file, "utf8");
      for (const m of text.matchAll(/\bopt\(\s*"([^"]+)"/g)) {
        const key = m[1] as string;
        if (flagOf({ option: key }) === undefined) missing.push(`${path.relative(SRC, file)}: ${key}`);
      }
      // A key built at run time (`policy.${key}`): at least its prefix must be the table's.
      for (const m of text.matchAll(/\bopt\(\s*`([^`$]*)\$\{/g)) {
        const prefix = m[1] as string;
        if (!Object.keys(OPTION_FLAGS).some((k) => k.startsWith(prefix)))
          missing.push(`${path.relative(SRC, file)}: ${prefix}...`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
