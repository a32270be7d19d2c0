// Bad input is exit 2 with one clear line, and nothing already written is damaged; locks, resume
// and --dry-run behave as documented.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  bench,
  EXAMPLES,
  FIXTURES,
  rollouts,
  slowHelloTasks,
  snapshot,
  startBench,
  tempDir,
  useScratch,
  waitUntil,
  writeFiles,
} from "./testing/bench.js";

const NS = ["--sandbox", "namespace"];

describe("bench run: bad input", () => {
  let root: string;
  let jobs: string;
  let before_: Map<string, string>;
  before(async () => {
    root = await tempDir("input");
    jobs = path.join(root, "jobs");
    const first = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--jobs-dir",
      jobs,
      "--job-name",
      "keep",
      ...NS,
    ]);
    assert.equal(first.code, 0, first.stderr);
    before_ = await snapshot(jobs);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const cases: [string, () => string[], RegExp][] = [
    ["a missing directory", () => [path.join(root, "nope")], /tasks path .*nope does not exist/],
    ["malformed TOML", () => [path.join(FIXTURES, "bad-toml")], /task\.toml/],
    ["malformed YAML", () => [path.join(FIXTURES, "bad-yaml")], /task\.md/],
    ["an unknown key", () => [path.join(FIXTURES, "unknown-key")], /verifier\.timout_sec.*timeout_sec/],
    ["no test script", () => [path.join(FIXTURES, "no-test-script")], /test\.sh/],
    [
      "an unknown agent",
      () => [path.join(EXAMPLES, "hello"), "-a", "oracel"],
      /unknown agent "oracel".*oracle/,
    ],
    [
      "a bad --trials",
      () => [path.join(EXAMPLES, "hello"), "--trials", "0"],
      /--trials "0": expected a whole number of at least 1/,
    ],
  ];
  for (const [what, args, message] of cases) {
    it(`refuses ${what} with one line and exit 2`, async () => {
      const argv = args();
      const withAgent = argv.includes("-a") ? argv : [...argv, "-a", "oracle"];
      const run = await bench(["run", ...withAgent, "--jobs-dir", jobs, "--job-name", "keep", ...NS]);
      assert.equal(run.code, 2, run.stderr);
      const lines = run.stderr.trim().split("\n");
      assert.equal(lines.length, 1, run.stderr);
      assert.match(lines[0] ?? "", message);
      assert.deepEqual(await snapshot(jobs), before_, "nothing already written changes");
    });
  }

  it("refuses an unwritable jobs dir with exit 2", async () => {
    const file = path.join(root, "a-file");
    await fs.writeFile(file, "x");
    const run = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--jobs-dir",
      path.join(file, "jobs"),
      ...NS,
    ]);
    assert.equal(run.code, 2);
    assert.match(run.stderr.trim(), /^bench: --jobs-dir .*a-file\/jobs: not a folder \(.*a-file is a file\)/);
  });

  it("prints the plan with --dry-run and writes nothing", async () => {
    const fresh = path.join(root, "dry");
    const run = await bench([
      "run",
      path.join(EXAMPLES, "half-life"),
      "-a",
      "oracle",
      "--trials",
      "3",
      "--jobs-dir",
      fresh,
      "--dry-run",
      ...NS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const plan = JSON.parse(run.stdout);
    assert.equal(plan.jobs.length, 3);
    assert.deepEqual(
      plan.jobs.map((j: { trial: string }) => j.trial),
      ["trial-01", "trial-02", "trial-03"],
    );
    assert.equal(plan.jobs[0].plan.tasks[0].name, "half-life");
    await assert.rejects(fs.access(fresh));
  });
});

describe("bench run: locks and resume", () => {
  const scratch = useScratch("resume");

  it("refuses a job locked by a live process, naming its pid, and takes over a stale lock", async () => {
    const jobs = path.join(scratch(), "locked");
    const args = [
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--jobs-dir",
      jobs,
      "--job-name",
      "held",
      ...NS,
    ];
    const jobDir = path.join(jobs, "oracle/trial-01/held");
    await fs.mkdir(jobDir, { recursive: true });
    const holder = spawn("sleep", ["30"]);
    try {
      await fs.writeFile(
        path.join(jobDir, ".evaluation.lock"),
        JSON.stringify({ pid: holder.pid, host: os.hostname(), started_at: "x" }),
      );
      const refused = await bench(args);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, new RegExp(`locked by pid ${holder.pid}`));
    } finally {
      holder.kill("SIGKILL");
    }
    await new Promise((r) => holder.once("exit", r));
    const taken = await bench(args);
    assert.equal(taken.code, 0, taken.stderr);
    assert.match(taken.stdout, /trial-01 {2}reward 1\.0/);
  });

  it("finishes a job killed mid-run with every trial present once", async () => {
    const tasks = await slowHelloTasks(
      path.join(scratch(), "slow-tasks"),
      ["slow-a", "slow-b", "slow-c", "slow-d"],
      0.7,
    );
    const jobs = path.join(scratch(), "killed");
    const args = ["run", tasks, "-a", "oracle", "-j", "1", "--jobs-dir", jobs, "--job-name", "again", ...NS];
    const child = startBench(args);
    // Kill it (SIGKILL: no chance to clean up) once the first rollout has finished and the next
    // has started: right after a result.json the next rollout's folder may not be made yet.
    await waitUntil(async () => {
      const now = await rollouts(jobs).catch(() => []);
      return now.some((r) => r.result !== null) && now.some((r) => r.result === null);
    }, "the first rollout to finish and the next to start");
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const partial = await rollouts(jobs);
    assert.ok(
      partial.some((r) => r.result === null),
      "a trial was cut off mid-run",
    );
    const resumed = await bench(args);
    assert.equal(resumed.code, 0, resumed.stderr);
    const all = await rollouts(jobs);
    const finals = [];
    for (const r of all) {
      const replaced = await fs.access(path.join(r.dir, "replaced.json")).then(
        () => true,
        () => false,
      );
      if (!replaced) finals.push(r);
    }
    assert.deepEqual(finals.map((r) => r.result?.task_name).sort(), ["slow-a", "slow-b", "slow-c", "slow-d"]);
    assert.ok(finals.every((r) => r.result?.rewards?.reward === 1));
    assert.equal(resumed.stdout.match(/ {2}reward 1\.0/g)?.length, 4, resumed.stdout);
    const cut = all.find((r) => r.result === null);
    const marker = JSON.parse(await fs.readFile(path.join(cut?.dir ?? "", "replaced.json"), "utf8"));
    assert.equal(marker.reason, "interrupted");
  });
});

describe("bench run: what a killed run leaves behind", () => {
  it("removes the sandbox scratch roots of a run that died, on the next run", async () => {
    const parent = path.join(os.tmpdir(), "benchflow-sandboxes");
    const orphan = path.join(parent, "orphan-test-XXXXXX");
    await fs.mkdir(path.join(orphan, "meta"), { recursive: true });
    await fs.mkdir(path.join(orphan, "fs/app"), { recursive: true });
    const dead = spawn("true");
    await new Promise((r) => dead.once("exit", r));
    await fs.writeFile(
      path.join(orphan, "meta/owner.json"),
      JSON.stringify({ pid: dead.pid, host: os.hostname() }),
    );
    const root = await tempDir("orphans");
    try {
      const run = await bench([
        "run",
        path.join(EXAMPLES, "hello"),
        "-a",
        "oracle",
        "--jobs-dir",
        root,
        ...NS,
      ]);
      assert.equal(run.code, 0, run.stderr);
      await assert.rejects(fs.access(orphan), "the dead run's scratch root is gone");
      const left = (await fs.readdir(parent)).filter((d) => d.startsWith("hello__"));
      assert.deepEqual(left, [], "the run removed its own sandboxes");
    } finally {
      await fs.rm(root, { recursive: true, force: true });
      await fs.rm(orphan, { recursive: true, force: true });
    }
  });
});

describe("bench run: choosing tasks and stopping", () => {
  it("picks tasks with --include and --exclude globs", async () => {
    const run = await bench([
      "run",
      EXAMPLES,
      "-a",
      "oracle",
      "--include",
      "h*",
      "--exclude",
      "half-*",
      "--dry-run",
      ...NS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const plan = JSON.parse(run.stdout);
    assert.deepEqual(
      plan.jobs[0].plan.tasks.map((t: { name: string }) => t.name),
      ["hello"],
    );
  });

  it("ends trials in flight as interrupted on SIGTERM, exits 143, and a rerun completes them", async () => {
    const root = await tempDir("sigterm");
    try {
      const tasks = await slowHelloTasks(path.join(root, "tasks"), ["wait-a", "wait-b"], 3);
      const jobs = path.join(root, "jobs");
      const args = ["run", tasks, "-a", "oracle", "-j", "2", "--jobs-dir", jobs, "--job-name", "stop", ...NS];
      const child = startBench(args);
      let stdout = "";
      child.stdout?.on("data", (d) => (stdout += d));
      await waitUntil(
        async () => (await rollouts(jobs).catch(() => [])).length === 2,
        "both trials to start",
      );
      await new Promise((r) => setTimeout(r, 300));
      child.kill("SIGTERM");
      // "close", not "exit": the last lines may still be in the pipe when the process has exited.
      const code = await new Promise((r) => child.once("close", (c) => r(c)));
      assert.equal(code, 143);
      const cut = await rollouts(jobs);
      assert.deepEqual(
        cut.map((r) => r.result?.error_category),
        ["interrupted", "interrupted"],
      );
      assert.match(stdout, /unscored \(interrupted\)/);
      const again = await bench(args);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout.match(/ {2}reward 1\.0/g)?.length, 2);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});

describe("bench tasks check", () => {
  it("reports every problem of every task and exits 1", async () => {
    const run = await bench(["tasks", "check", FIXTURES]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /bad-toml: problem: .*task\.toml:4:10: malformed TOML/);
    assert.match(run.stdout, /bad-yaml: problem: .*task\.md:6: malformed YAML/);
    assert.match(run.stdout, /no-test-script: problem: .*tests\/test\.sh: missing/);
    assert.match(
      run.stdout,
      /unknown-key: problem: .*unknown key verifier\.timout_sec; did you mean timeout_sec\?/,
    );
    assert.match(run.stdout, /hello|no-reward: ok/);
    assert.match(run.stderr, /^4 of \d+ task\(s\) have problems/);
  });

  it("exits 0 on the examples", async () => {
    const run = await bench(["tasks", "check", EXAMPLES]);
    assert.equal(run.code, 0, run.stdout);
    assert.doesNotMatch(run.stdout, /problem/);
  });
});

describe("bench run: a compose task in the namespace sandbox", () => {
  it("is refused before anything runs, naming the task and the fix", async () => {
    const root = await tempDir("compose-ns");
    try {
      const task = path.join(root, "two-services");
      const files: Record<string, string> = {
        "task.toml": "[verifier]\ntimeout_sec = 30\n",
        "instruction.md": "Ask the api.\n",
        "environment/Dockerfile": "FROM debian:bookworm-slim\n",
        "environment/docker-compose.yaml": "services:\n  api:\n    image: debian:bookworm-slim\n",
        "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      };
      await writeFiles(task, files);
      const jobs = path.join(root, "jobs");
      const run = await bench(["run", task, "-a", "oracle", ...NS, "--jobs-dir", jobs]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /two-services \(docker-compose\.yaml\).*--sandbox container/);
      await assert.rejects(fs.stat(jobs), /ENOENT/);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
