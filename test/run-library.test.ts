// The library: Evaluation and loadJob from code, custom agents through the same door as built-in
// ones, isolation of the sandbox, and retries of infrastructure failures.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { registerAgent } from "../src/agents/registry.js";
import type { Agent } from "../src/agents/types.js";
import { CategorizedError } from "../src/errors.js";
import { Evaluation } from "../src/job/evaluation.js";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { EXAMPLES, REPO, useScratch } from "./testing/bench.js";

const scratch = useScratch("library");

describe("isolation", () => {
  it("hides the task folder, its tests and solution, the jobs directory and home directories from the agent", async () => {
    const jobsDir = path.join(scratch(), "isolation");
    // A file in the host user's home: the sandbox may have a fresh home of its own, never the host's.
    const homeMarker = path.join(os.homedir(), `.benchflow-test-marker-${process.pid}`);
    await fs.writeFile(homeMarker, "secret");
    after(() => fs.rm(homeMarker, { force: true }));
    const taskDir = path.join(EXAMPLES, "half-life");
    const probes: Record<string, string> = {
      task_dir: taskDir,
      task_tests: path.join(taskDir, "tests/test.sh"),
      task_solution: path.join(taskDir, "solution/solve.sh"),
      jobs_dir: jobsDir,
      mounted_tests: "/tests",
      mounted_solution: "/solution",
      home_marker: homeMarker,
      repo: REPO,
    };
    let seen = "";
    let whoami = "";
    const peeker: Agent = {
      name: "peeker",
      usesModel: false,
      seesSolution: false,
      async run(ctx) {
        const checks = Object.entries(probes).map(
          ([k, p]) => `if [ -e '${p}' ]; then echo ${k}=visible; else echo ${k}=hidden; fi`,
        );
        seen = (await ctx.sandbox.exec(checks.join("\n"), { user: "agent" })).stdout;
        whoami = (await ctx.sandbox.exec("id -u; touch /usr/x 2>&1 || echo usr-readonly", { user: "agent" }))
          .stdout;
        return { nToolCalls: 0, trajectorySource: null };
      },
    };
    registerAgent("peeker", () => peeker);
    const result = await new Evaluation({
      tasks: taskDir,
      agent: "peeker",
      jobsDir,
      sandbox: "namespace",
    }).run();
    assert.equal(result.results.length, 1);
    for (const k of Object.keys(probes))
      assert.match(seen, new RegExp(`^${k}=hidden$`, "m"), `${k} must be hidden:\n${seen}`);
    assert.notEqual(whoami.split("\n")[0], "0", "the agent runs as a non-root user");
    assert.match(whoami, /usr-readonly/);
  });
});

describe("the namespace plan", () => {
  it("says once per task, plainly, that RUN steps cannot be applied, and points to the container sandbox", async () => {
    const tasks = path.join(scratch(), "run-steps");
    await fs.cp(path.join(EXAMPLES, "hello"), path.join(tasks, "hello-run"), { recursive: true });
    const dockerfile = path.join(tasks, "hello-run/environment/Dockerfile");
    await fs.appendFile(dockerfile, "RUN apt-get update\nRUN echo built > /built.txt\n");
    const warnings: string[] = [];
    const result = await new Evaluation({
      tasks,
      agent: "oracle",
      trials: 2,
      jobsDir: path.join(scratch(), "run-steps-jobs"),
      sandbox: "namespace",
      onEvent: (e) => e.type === "warning" && warnings.push(e.message),
    }).run();
    assert.equal(result.exitCode, 0);
    const about = warnings.filter((w) => w.includes("RUN step"));
    assert.equal(about.length, 1, warnings.join("\n"));
    assert.match(about[0] ?? "", /task hello-run: its Dockerfile has 2 RUN step\(s\).*sandbox: "container"/);
  });
});

describe("the verifier", () => {
  it("empties /logs/verifier before the test runs, so a reward planted by the agent never counts", async () => {
    const planter: Agent = {
      name: "planter",
      usesModel: false,
      seesSolution: false,
      async run(ctx) {
        const planted = await ctx.sandbox.exec(
          "echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/.reward.json && echo planted",
          { user: "root" },
        );
        assert.match(planted.stdout, /planted/);
        return { nToolCalls: 0, trajectorySource: null };
      },
    };
    registerAgent("planter", () => planter);
    const result = await new Evaluation({
      tasks: path.join(REPO, "test/fixtures/tasks/no-reward"),
      agent: "planter",
      jobsDir: path.join(scratch(), "planted"),
      sandbox: "namespace",
    }).run();
    assert.equal(result.results[0]?.rewards, null);
    assert.equal(result.results[0]?.verifier_error_category, "verifier_failure");
  });
});

describe("retries", () => {
  it("retries an infrastructure failure, keeps the replaced attempt on disk, and counts the trial once", async () => {
    let calls = 0;
    const flaky: Agent = {
      name: "flaky",
      usesModel: false,
      seesSolution: false,
      async setup() {
        calls++;
        if (calls === 1) throw new CategorizedError("agent_setup", "could not start the agent (first try)");
      },
      async run(ctx) {
        await ctx.sandbox.exec("echo 'Hello, world!' > /app/hello.txt", { user: "agent" });
        return { nToolCalls: 0, trajectorySource: null };
      },
    };
    registerAgent("flaky", () => flaky);
    const jobsDir = path.join(scratch(), "retry");
    const warnings: string[] = [];
    const result = await new Evaluation({
      tasks: path.join(EXAMPLES, "hello"),
      agent: "flaky",
      jobsDir,
      sandbox: "namespace",
      retryBackoffMs: 1,
      onEvent: (e) => e.type === "warning" && warnings.push(e.message),
    }).run();
    assert.equal(result.exitCode, 0);
    assert.equal(result.results.length, 1);
    assert.equal(result.results[0]?.attempt, 2);
    assert.equal(result.results[0]?.rewards?.reward, 1);
    assert.match(warnings.join("\n"), /agent_setup .*retrying/);
    const all = await loadJob(jobsDir, { attempts: "all" });
    assert.equal(all.trials.length, 2);
    const replaced = all.trials.find((t) => t.replaced);
    assert.equal(replaced?.outcome.errorCategory, "agent_setup");
    assert.equal(replaced?.reward, null);
    assert.equal(result.results[0]?.replaces, replaced?.name);
    const marker = JSON.parse(await fs.readFile(path.join(replaced?.dir ?? "", "replaced.json"), "utf8"));
    assert.deepEqual([marker.reason, marker.replaced_by], ["retried", result.results[0]?.rollout_name]);
    const finals = await loadJob(jobsDir);
    assert.equal(finals.trials.length, 1);
  });

  it("does not retry a policy failure, and exits 1 when infrastructure keeps failing", async () => {
    const broken: Agent = {
      name: "broken",
      usesModel: false,
      seesSolution: false,
      async setup() {
        throw new CategorizedError("agent_setup", "never starts");
      },
      async run() {
        return { nToolCalls: 0, trajectorySource: null };
      },
    };
    registerAgent("broken", () => broken);
    const result = await new Evaluation({
      tasks: path.join(EXAMPLES, "hello"),
      agent: "broken",
      jobsDir: path.join(scratch(), "broken"),
      sandbox: "namespace",
      retryAttempts: 1,
      retryBackoffMs: 1,
    }).run();
    assert.equal(result.exitCode, 1);
    assert.equal(result.results[0]?.error_category, "agent_setup");
    assert.equal(result.results[0]?.rewards, null, "an infrastructure failure is unscored, never 0");
    assert.equal((await loadJob(path.join(scratch(), "broken"), { attempts: "all" })).trials.length, 2);
  });
});

describe("loadJob", () => {
  it("reads a folder of trial jobs back with rewards, outcomes and paths", async () => {
    const jobsDir = path.join(scratch(), "load");
    const evaluation = new Evaluation({
      tasks: path.join(EXAMPLES, "half-life"),
      agent: "nop",
      trials: 3,
      jobsDir,
      sandbox: "namespace",
    });
    const run = await evaluation.run();
    assert.equal(run.exitCode, 0);
    const job = await loadJob(path.join(jobsDir, "nop"));
    assert.equal(job.trials.length, 3);
    assert.deepEqual(job.trials.map((t) => t.job.repeat).sort(), ["trial-01", "trial-02", "trial-03"]);
    for (const t of job.trials) {
      assert.equal(t.reward, 0);
      assert.equal(t.outcome.category, null);
      assert.equal(t.outcome.scoreOutcome, "failed");
      assert.equal(t.task, "half-life");
      await fs.access(path.join(t.dir, "result.json"));
    }
  });

  it("lists a trial whose result.json is missing or cut short, unscored", async () => {
    const jobDir = path.join(scratch(), "cut/oracle/trial-01/j");
    await fs.mkdir(path.join(jobDir, "hello__0000000a"), { recursive: true });
    await fs.mkdir(path.join(jobDir, "hello2__0000000b"), { recursive: true });
    await fs.writeFile(path.join(jobDir, "hello2__0000000b/result.json"), '{"task_name": "hel');
    const job = await loadJob(path.join(scratch(), "cut"));
    const states = Object.fromEntries(job.trials.map((t) => [t.task, [t.resultState, t.reward]]));
    assert.deepEqual(states, { hello: ["missing", null], hello2: ["truncated", null] });
  });
});

describe("the package", () => {
  it('resolves `import { Evaluation, loadJob } from "benchflow"` to built code', async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(REPO, "package.json"), "utf8"));
    assert.equal(pkg.exports["."].import, "./dist/index.js");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "const m = await import('benchflow'); console.log(typeof m.Evaluation, typeof m.loadJob, import.meta.resolve('benchflow'))",
      ],
      { cwd: REPO },
    );
    assert.match(stdout, /^function function file:.*\/dist\/index\.js$/m);
  });
});
