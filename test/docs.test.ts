// Every ```bash runnable block in README.md and docs/ runs as a user would type it (with `bench`
// and `npx bench` meaning this checkout), in a scratch folder that holds the examples.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { REPO, tempDir } from "./testing/bench.js";

async function runnableBlocks(): Promise<{ file: string; code: string }[]> {
  const files = ["README.md", ...(await fs.readdir(path.join(REPO, "docs"))).map((f) => `docs/${f}`)];
  const blocks: { file: string; code: string }[] = [];
  for (const file of files.filter((f) => f.endsWith(".md"))) {
    const text = await fs.readFile(path.join(REPO, file), "utf8");
    for (const m of text.matchAll(/```bash runnable\n([\s\S]*?)```/g))
      blocks.push({ file, code: m[1] as string });
  }
  return blocks;
}

describe("documentation examples", async () => {
  const blocks = await runnableBlocks();
  const scratch = await tempDir("docs");
  const bin = path.join(scratch, "bin");
  await fs.mkdir(bin);
  const tsx = path.join(REPO, "node_modules/tsx/dist/esm/index.mjs");
  await fs.writeFile(
    path.join(bin, "bench"),
    `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${path.join(REPO, "src/cli/main.ts")}" "$@"\n`,
    { mode: 0o755 },
  );
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  it("finds runnable examples in the docs", () => assert.ok(blocks.length >= 3));
  for (const [i, block] of blocks.entries()) {
    it(`${block.file} example ${i + 1} runs and exits 0`, async () => {
      const cwd = path.join(scratch, `run-${i}`);
      await fs.mkdir(cwd);
      await fs.symlink(path.join(REPO, "examples"), path.join(cwd, "examples"));
      const script = block.code.replaceAll("npx bench", "bench");
      const run = spawnSync("bash", ["-e", "-c", script], {
        cwd,
        encoding: "utf8",
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, BENCHFLOW_SANDBOX: "namespace" },
      });
      assert.equal(run.status, 0, `${block.file}:\n${script}\n${run.stdout}\n${run.stderr}`);
    });
  }
});
