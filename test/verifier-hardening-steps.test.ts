// Multi-step tasks: a step's tests (the shared ones too) and its verifier's files are gone before
// the next step's agent runs. Step two's solution looks at /tests and /logs/verifier and writes
// what it found; step two's test scores 1 only when it found nothing. Both sandboxes.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, rollouts, useScratch, writeFiles } from "./testing/bench.js";

const scratch = useScratch("verifier-hardening-steps");

const FILES: Record<string, string> = {
  "task.toml": `version = "1.0"
multi_step_reward_strategy = "mean"
[agent]
timeout_sec = 30
[verifier]
timeout_sec = 30
[environment]
allow_internet = false
[[steps]]
name = "one"
[[steps]]
name = "two"
`,
  "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
  "tests/secret.txt": "the shared tests' secret\n",
  "tests/test.sh":
    "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\necho 'step one verifier ran' > /logs/verifier/note.txt\n",
  "steps/one/instruction.md": "Do nothing.\n",
  "steps/one/solution/solve.sh": "#!/bin/bash\ntrue\n",
  "steps/two/instruction.md": "Do nothing.\n",
  // The spy: what the previous step's verifier left readable.
  "steps/two/solution/solve.sh":
    "#!/bin/bash\n{ ls -A /tests; ls -A /logs/verifier; cat /tests/secret.txt; } > /app/seen.txt 2>/dev/null; true\n",
  "steps/two/tests/test.sh":
    '#!/bin/bash\necho "seen: $(cat /app/seen.txt)"\nif [ -s /app/seen.txt ]; then echo 0; else echo 1; fi > /logs/verifier/reward.txt\n',
};

async function check(sandbox: string): Promise<void> {
  const task = path.join(scratch(), `two-steps-${sandbox}`);
  await writeFiles(task, FILES);
  const jobs = path.join(scratch(), `jobs-${sandbox}`);
  const run = await bench(["run", task, "-a", "oracle", "--jobs-dir", jobs, "--sandbox", sandbox]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const [r] = await rollouts(jobs);
  const steps = (r?.result?.step_results ?? []) as {
    step_name: string;
    rewards: unknown;
    test_last_line: string;
  }[];
  assert.deepEqual(
    steps.map((s) => [s.step_name, s.rewards]),
    [
      ["one", { reward: 1 }],
      ["two", { reward: 1 }],
    ],
    `step two's agent saw: ${steps[1]?.test_last_line}`,
  );
}

describe("multi-step: the tests and /logs/verifier are gone before the next step's agent", () => {
  it("namespace sandbox", () => check("namespace"));
  it("container sandbox", async (t) => {
    if (!(await engineOrSkip(t as unknown as TestContext))) return;
    await check("container");
  });
});
