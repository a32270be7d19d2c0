// Harbor's timeout multipliers: the same task and solution time out at the task's own limit and
// finish when the run scales that limit; the scale is recorded with the rollout.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { bench, rollouts, tempDir, writeFiles } from "./testing/bench.js";

describe("bench run --agent-timeout-multiplier", () => {
  let root: string;
  let task: string;
  before(async () => {
    root = await tempDir("timeouts");
    task = path.join(root, "slow-solve");
    const files: Record<string, string> = {
      "task.toml":
        "[agent]\ntimeout_sec = 1\n[verifier]\ntimeout_sec = 30\n[environment]\nallow_internet = false\n",
      "instruction.md": "Write done to /app/out.txt, slowly.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
      "solution/solve.sh": "#!/bin/bash\nsleep 3\necho done > /app/out.txt\n",
      "tests/test.sh":
        '#!/bin/bash\nif [ "$(cat /app/out.txt 2>/dev/null)" = done ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    };
    await writeFiles(task, files);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const run = (jobsDir: string, extra: string[]) =>
    bench(["run", task, "-a", "oracle", "--sandbox", "namespace", "--jobs-dir", jobsDir, "-q", ...extra]);

  it("times out at the task's limit and finishes under a scaled one", async () => {
    const plain = await run(path.join(root, "plain"), []);
    assert.equal(plain.code, 0, plain.stderr);
    const [timedOut] = await rollouts(path.join(root, "plain"));
    assert.equal(timedOut?.result?.error_category, "timeout", JSON.stringify(timedOut?.result));
    assert.equal(timedOut?.result?.rewards?.reward, 0);

    // Scaled far past the solution's 3 s, so that a slow machine finishes under it all the same.
    const scaled = await run(path.join(root, "scaled"), ["--agent-timeout-multiplier", "40"]);
    assert.equal(scaled.code, 0, scaled.stderr);
    const [finished] = await rollouts(path.join(root, "scaled"));
    assert.equal(finished?.result?.error_category, null, JSON.stringify(finished?.result));
    assert.equal(finished?.result?.rewards?.reward, 1);
    const config = JSON.parse(await fs.readFile(path.join(finished?.dir ?? "", "config.json"), "utf8"));
    assert.deepEqual(config.timeout_multipliers ?? config.settings?.timeout_multipliers, {
      all: null,
      agent: 40,
      verifier: null,
      build: null,
    });
  });

  it("refuses a multiplier that is not a positive number, naming the flag", async () => {
    const bad = await run(path.join(root, "bad"), ["--timeout-multiplier", "0"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--timeout-multiplier must be a number greater than 0; got 0/);
  });
});
