// Loading multi-step tasks (Harbor's [[steps]] layout), and the one refusal of steps in task.md.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { inspectTask } from "./inspect.js";
import { loadTask } from "./load.js";

const FIXTURES = path.resolve(import.meta.dirname, "../../test/fixtures/tasks");

async function taskWith(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "steps-"));
  for (const [name, text] of Object.entries({
    "environment/Dockerfile": "FROM debian:bookworm-slim\n",
    ...files,
  })) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), text);
  }
  return dir;
}

describe("multi-step tasks", () => {
  it("resolve each step's instruction, tests (shared first), solution (or the shared one), workdir and limits", async () => {
    const task = await loadTask(path.join(FIXTURES, "three-steps"));
    assert.equal(task.instruction, "");
    const steps = task.steps ?? [];
    assert.deepEqual(
      steps.map((s) => s.name),
      ["one", "two", "three"],
    );
    const [one, two, three] = steps;
    assert.match(one?.instruction ?? "", /one\.txt/);
    assert.deepEqual(
      two?.testsDirs.map((d) => path.relative(task.dir, d)),
      ["tests", "steps/two/tests"],
    );
    assert.deepEqual(
      three?.testsDirs.map((d) => path.relative(task.dir, d)),
      ["tests"],
    );
    assert.equal(path.relative(task.dir, three?.solutionDir ?? ""), "solution");
    assert.equal(path.relative(task.dir, two?.workdirDir ?? ""), "steps/two/workdir");
    assert.equal(one?.minReward, 1);
    assert.equal(three?.minReward, null);
    // Harbor's code: a step's verifier timeout is its own, else 600 (not the task's); the agent's falls back.
    assert.equal(two?.verifierTimeoutSec, 10);
    assert.equal(one?.verifierTimeoutSec, 600);
    assert.equal(one?.agentTimeoutSec, 10);
    assert.deepEqual(two?.verifierEnv, { EXPECTED: "two" });
    assert.equal(task.config.multiStepRewardStrategy, "mean");
    assert.deepEqual(task.warnings, []);
  });

  it("names what a step lacks, and refuses min_reward that is not a number", async () => {
    const dir = await taskWith({
      "task.toml": '[[steps]]\nname = "a"\nmin_reward = "high"\n[[steps]]\nname = "b"\n',
      "steps/a/instruction.md": "do a\n",
    });
    const { problems } = await inspectTask(dir);
    assert.ok(
      problems.some((p) => /steps\[0\]\.min_reward must be a number/.test(p)),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) =>
        /steps\/a\/tests\/test\.sh: missing, and there is no shared tests\/test\.sh/.test(p),
      ),
    );
    assert.ok(problems.some((p) => /steps\/b\/: missing; \[\[steps\]\] name = "b"/.test(p)));
    // No message says the steps are ignored, or that the top-level instruction.md is missing.
    assert.ok(!problems.some((p) => /instruction\.md: missing; write the prompt/.test(p)));
  });

  it("refuses steps in the task.md layout with one message", async () => {
    const dir = await taskWith({
      "task.md": "---\nsteps:\n  - name: a\n---\nDo it.\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    const { problems, warnings } = await inspectTask(dir);
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(
      problems[0] ?? "",
      /task\.md: steps is not supported in the task\.md layout.*task\.toml with \[\[steps\]\]/,
    );
    assert.ok(!warnings.some((w) => /steps/.test(w)), warnings.join("\n"));
  });
});
