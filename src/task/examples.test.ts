import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { checkTask } from "./check.js";
import { discoverTasks } from "./discover.js";
import { loadTask } from "./load.js";

const EXAMPLES = path.resolve("examples/tasks");
const FIXTURES = path.resolve("test/fixtures/tasks");
const BROKEN_FIXTURES = new Set(["bad-toml", "bad-yaml", "unknown-key", "no-test-script"]);

describe("example tasks", () => {
  it("include hello, half-life and count-words, and each loads and checks clean", async () => {
    const all = await discoverTasks(EXAMPLES);
    // Examples that need an image build (RUN steps) are for the container sandbox and tested there.
    const namespaceReady = ["count-words", "half-life", "hello"];
    assert.deepEqual(
      all.map((d) => path.basename(d)).filter((n) => namespaceReady.includes(n)),
      namespaceReady,
    );
    for (const dir of all) {
      const { problems, warnings, notes } = await checkTask(dir);
      assert.deepEqual({ problems, warnings }, { problems: [], warnings: [] }, dir);
      // The only note an example may carry: its RUN steps need --sandbox container.
      assert.ok(
        notes.every((n) => n.includes("RUN step(s)")),
        notes.join("\n"),
      );
    }
    const dirs = all.filter((d) => namespaceReady.includes(path.basename(d)));
    for (const dir of dirs) {
      assert.deepEqual(await checkTask(dir), {
        task: path.basename(dir),
        problems: [],
        warnings: [],
        notes: [],
      });
      const task = await loadTask(dir);
      assert.equal(task.dockerfile?.baseImage, "debian:bookworm-slim");
      assert.deepEqual(task.dockerfile?.runSteps, [], `${task.name} must work without an image build`);
      assert.equal(task.solveScript, "solve.sh");
      assert.notEqual(task.instruction, "");
      for (const script of [
        path.join(task.verifierDir, task.testScript),
        path.join(task.solutionDir ?? "", "solve.sh"),
      ]) {
        const text = await fs.readFile(script, "utf8");
        // The sandbox base image is a debootstrap minbase: no python there.
        assert.doesNotMatch(text, /python/, `${script} must use only bash, coreutils and awk`);
      }
    }
  });

  it("half-life copies its data into /app/data and count-words uses the native layout", async () => {
    const halfLife = await loadTask(path.join(EXAMPLES, "half-life"));
    assert.equal(halfLife.layout, "split");
    assert.deepEqual(
      halfLife.dockerfile?.copies.map((c) => c.dest),
      ["/app/data/decay.csv"],
    );
    assert.equal(halfLife.dockerfile?.workdir, "/app");
    const countWords = await loadTask(path.join(EXAMPLES, "count-words"));
    assert.equal(countWords.layout, "native");
    assert.equal(countWords.verifierMount, "/verifier");
    assert.equal(countWords.solutionMount, "/oracle");
    assert.equal(countWords.config.agent.timeoutSec, 120);
  });
});

describe("fixture tasks", () => {
  it("load with short timeouts, except the ones broken on purpose", async () => {
    // skill-* and mcp-* fixtures drive real agent CLIs, which need more than a few seconds;
    // hostile-logs writes GiB-sized (sparse) files, whose copy out takes longer under load.
    const slow = ["skill-*", "mcp-*", "hostile-logs"];
    const dirs = await discoverTasks(FIXTURES, { exclude: [...BROKEN_FIXTURES, ...slow] });
    assert.equal(dirs.length, 18);
    for (const dir of dirs) {
      const task = await loadTask(dir);
      assert.ok((task.config.agent.timeoutSec ?? Number.POSITIVE_INFINITY) <= 10, task.name);
      assert.ok(task.config.verifier.timeoutSec <= 10, task.name);
      assert.deepEqual(task.warnings, [], task.name);
    }
    const range = await loadTask(path.join(FIXTURES, "reward-range"));
    assert.deepEqual(range.config.verifier.rewardRange, [-1, 1]);
    assert.equal((await loadTask(path.join(FIXTURES, "verifier-hangs"))).config.verifier.timeoutSec, 2);
    assert.equal((await loadTask(path.join(FIXTURES, "agent-hangs"))).config.agent.timeoutSec, 2);
  });
});
