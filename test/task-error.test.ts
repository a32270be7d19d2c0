// A task that cannot run as written fails the same way on every attempt: it ends `task_error` in
// ONE attempt (nothing replaced, no retry), unscored, with a line naming the task and the fix; and a
// folder whose tasks do not parse is refused whole before anything is written.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { type BenchRun, bench, EXAMPLES, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("task-error");

/** A copy of the hello example under `root`, changed by `edit`. */
async function helloCopy(root: string, name: string, edit: (dir: string) => Promise<void>): Promise<string> {
  const dir = path.join(root, name);
  await fs.cp(path.join(EXAMPLES, "hello"), dir, { recursive: true });
  await edit(dir);
  return dir;
}

/** Every file named `name` under `root`. */
async function filesNamed(root: string, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name === name) found.push(path.join(entry.parentPath, entry.name));
  }
  return found;
}

/** The run made one attempt of one task, which ended task_error with a null reward; its result. */
async function oneTaskErrorAttempt(jobs: string, run: BenchRun): Promise<Record<string, any>> {
  const all = await rollouts(jobs).catch(() => assert.fail(`the run wrote no jobs folder: ${run.stderr}`));
  assert.equal(all.length, 1, `one rollout folder, got ${all.map((r) => r.dir).join(", ")}`);
  assert.deepEqual(await filesNamed(jobs, "replaced.json"), [], "no attempt was replaced (no retry)");
  const result = all[0]?.result;
  assert.ok(result, "result.json written");
  assert.equal(result.error_category, "task_error");
  assert.equal(result.outcome, "task_error");
  assert.equal(result.rewards, null);
  assert.equal(result.attempt, 1);
  return result;
}

describe("task_error: one attempt, unscored, the fix named", () => {
  it("-a oracle on a task with no solution (namespace sandbox)", async () => {
    const task = await helloCopy(path.join(scratch(), "tasks-nosol"), "no-solution", (dir) =>
      fs.rm(path.join(dir, "solution"), { recursive: true }),
    );
    const jobs = path.join(scratch(), "jobs-nosol");
    const run = await bench(["run", task, "-a", "oracle", "--jobs-dir", jobs, "--sandbox", "namespace"]);
    assert.notEqual(run.code, 0, "an unscored trial is not a clean run");
    assert.notEqual(run.code, 2, `not bad input: ${run.stderr}`);
    const result = await oneTaskErrorAttempt(jobs, run);
    assert.match(
      result.error,
      /^task no-solution: it has no solution, so -a oracle cannot run it — fix: add solution\/solve\.sh to /,
    );
    assert.match(run.stdout, /unscored \(task_error\): task no-solution: .* add solution\/solve\.sh/);
  });

  it("a docker_image the registry cannot give (container sandbox)", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const image = "benchflow-test-no-such-image:never";
    const task = await helloCopy(path.join(scratch(), "tasks-noimage"), "no-image", async (dir) => {
      const toml = await fs.readFile(path.join(dir, "task.toml"), "utf8");
      await fs.writeFile(
        path.join(dir, "task.toml"),
        toml.replace("[environment]\n", `[environment]\ndocker_image = "${image}"\n`),
      );
    });
    const jobs = path.join(scratch(), "jobs-noimage");
    const run = await bench(["run", task, "-a", "oracle", "--jobs-dir", jobs, "--sandbox", "container"]);
    assert.notEqual(run.code, 2, run.stderr);
    const result = await oneTaskErrorAttempt(jobs, run);
    assert.match(
      result.error,
      new RegExp(
        `^task no-image: the image ${image} \\(task\\.toml \\[environment\\] docker_image\\) is not on this machine and could not be pulled: .+ — fix: pull or load ${image}`,
      ),
    );
  });

  it("a Dockerfile RUN step that exits non-zero (container sandbox), keeping the build log", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await helloCopy(path.join(scratch(), "tasks-badrun"), "bad-run", (dir) =>
      fs.appendFile(path.join(dir, "environment/Dockerfile"), "RUN echo about-to-fail && exit 7\n"),
    );
    const jobs = path.join(scratch(), "jobs-badrun");
    const run = await bench(["run", task, "-a", "oracle", "--jobs-dir", jobs, "--sandbox", "container"]);
    assert.notEqual(run.code, 2, run.stderr);
    const result = await oneTaskErrorAttempt(jobs, run);
    const [rollout] = await rollouts(jobs);
    const logFile = path.join(path.dirname(rollout?.dir ?? ""), "builds/bad-run.log");
    assert.match(
      result.error,
      /^task bad-run: building its image failed: .*(exit status 7|returned a non-zero code: 7) — fix environment\/Dockerfile line \d+ /,
    );
    assert.ok(result.error.includes(`(full log: ${logFile})`), result.error);
    assert.match(result.error, /last lines of the build log:\n(.*\n)*about-to-fail/);
    assert.match(await fs.readFile(logFile, "utf8"), /about-to-fail/);
  });
});

describe("a folder with broken tasks is refused before anything runs", () => {
  it("names every broken task and each of its problems, exit 2, writes nothing", async () => {
    const root = path.join(scratch(), "tasks-mixed");
    await helloCopy(root, "a-good", async () => {});
    await helloCopy(root, "b-bad-toml", (dir) =>
      fs.appendFile(path.join(dir, "task.toml"), "\n[verifier\ntimeout_sec = 3\n"),
    );
    // Two problems in one task: both must be listed, not only the first.
    await helloCopy(root, "c-two-problems", async (dir) => {
      await fs.rm(path.join(dir, "tests/test.sh"));
      const toml = await fs.readFile(path.join(dir, "task.toml"), "utf8");
      await fs.writeFile(path.join(dir, "task.toml"), toml.replace("[agent]\n", "[agent]\ntimout_sec = 5\n"));
    });
    const jobs = path.join(scratch(), "jobs-mixed");
    const run = await bench(["run", root, "-a", "oracle", "--jobs-dir", jobs, "--sandbox", "namespace"]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /^bench: 2 of 3 task\(s\) cannot run \(3 problem\(s\)\); nothing was started/);
    const lines = run.stderr.trim().split("\n").slice(1);
    assert.equal(lines.length, 3, run.stderr);
    assert.match(run.stderr, /\n {2}b-bad-toml: problem: \S*b-bad-toml\/task\.toml:\d+:\d+: malformed TOML/);
    assert.match(run.stderr, /\n {2}c-two-problems: problem: \S*task\.toml: unknown key agent\.timout_sec/);
    assert.match(
      run.stderr,
      /\n {2}c-two-problems: problem: \S*tests\/test\.sh: missing; add the test script/,
    );
    assert.doesNotMatch(run.stderr, /a-good/);
    await assert.rejects(fs.stat(jobs), { code: "ENOENT" }, "no jobs folder was written");
  });
});
