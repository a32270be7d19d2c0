// --verifier-hardening through the real CLI: a solution that rewrites the task's Makefile (which
// the test runs) scores 1 with hardening off, so the exploit is real, and 0 with it on (the
// Makefile restored); hardening.json and config.json say which. A bad value is refused by name.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { bench, benchOracle, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("verifier-hardening");

const FILES: Record<string, string> = {
  "task.toml": "[agent]\ntimeout_sec = 30\n\n[verifier]\ntimeout_sec = 30\n",
  "instruction.md": "Write the answer to /app/answer.\n",
  "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\nCOPY Makefile /app/Makefile\n",
  "environment/Makefile": "check:\n\t@test -f /app/answer && echo 1 || echo 0\n",
  "tests/test.sh": "make -s -C /app check > /logs/verifier/reward.txt\n",
  // Not the answer: a Makefile that always says 1.
  "solution/solve.sh": "printf 'check:\\n\\t@echo 1\\n' > /app/Makefile\n",
};

async function writeTask(root: string, toml = FILES["task.toml"]): Promise<string> {
  const dir = path.join(root, "makefile-exploit");
  for (const [rel, text] of Object.entries({ ...FILES, "task.toml": toml as string })) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text, { mode: rel.endsWith(".sh") ? 0o755 : 0o644 });
  }
  return dir;
}

describe("--verifier-hardening", () => {
  for (const [mode, reward] of [
    ["off", 1],
    ["on", 0],
  ] as const) {
    it(`${mode}: the rewritten Makefile scores ${reward}`, async () => {
      const task = await writeTask(path.join(scratch(), mode));
      const jobsDir = path.join(scratch(), `jobs-${mode}`);
      const run = await benchOracle(task, jobsDir, ["--verifier-hardening", mode]);
      const [found] = await rollouts(jobsDir);
      assert.equal(found?.result?.rewards?.reward, reward, `${run.stdout}${run.stderr}`);
      const dir = found?.dir ?? "";
      const config = JSON.parse(await fs.readFile(path.join(dir, "config.json"), "utf8"));
      assert.equal(config.verifier_hardening, mode);
      const record = JSON.parse(await fs.readFile(path.join(dir, "verifier", "hardening.json"), "utf8"));
      assert.equal(record.hardening, mode);
      if (mode === "on") {
        const step = record.steps.find((s: { name: string }) => s.name === "build_files");
        assert.deepEqual(step.paths, { restored: ["/app/Makefile"] });
      }
    });
  }

  it("restore_build_files = false: a task whose answer is its Makefile keeps the agent's (hardening on)", async () => {
    const toml = `${FILES["task.toml"]}\n[verifier.hardening]\nrestore_build_files = false\n`;
    const task = await writeTask(path.join(scratch(), "kept"), toml);
    const jobsDir = path.join(scratch(), "jobs-kept");
    const run = await benchOracle(task, jobsDir);
    const [found] = await rollouts(jobsDir);
    assert.equal(found?.result?.rewards?.reward, 1, `${run.stdout}${run.stderr}`);
    const record = JSON.parse(
      await fs.readFile(path.join(found?.dir ?? "", "verifier", "hardening.json"), "utf8"),
    );
    assert.equal(record.hardening, "on");
    assert.equal(record.restore_build_files, false);
  });

  it("refuses a value other than on or off, naming the flag", async () => {
    const run = await bench(["run", scratch(), "-a", "nop", "--verifier-hardening", "maybe"]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /--verifier-hardening takes on or off, got "maybe"/);
  });
});
