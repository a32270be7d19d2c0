import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { UserInputError } from "../errors.js";
import { loadTask, loadTasks } from "./load.js";
import { MINIMAL_SPLIT_TASK, removeRoot, tempRoot, writeTask } from "./testing/task-dir.js";

const FIXTURES = path.resolve("test/fixtures/tasks");

/** Asserts loadTask refuses with a UserInputError whose message contains every fragment. */
async function refuses(dir: string, ...fragments: (string | RegExp)[]): Promise<string> {
  let message = "";
  await assert.rejects(loadTask(dir), (err: unknown) => {
    assert.ok(err instanceof UserInputError, `expected UserInputError, got ${String(err)}`);
    message = err.message;
    return true;
  });
  for (const f of fragments) {
    if (typeof f === "string")
      assert.ok(message.includes(f), `message lacks ${JSON.stringify(f)}: ${message}`);
    else assert.match(message, f);
  }
  return message;
}

describe("loadTask", () => {
  let root: string;
  before(async () => {
    root = await tempRoot();
  });
  after(() => removeRoot(root));

  it("loads the split and native layouts into the same normalised shape", async () => {
    const split = await writeTask(root, "same-split", {
      "task.toml": [
        "[metadata]\ndifficulty = 'easy'",
        "[agent]\ntimeout_sec = 90",
        "[verifier]\ntimeout_sec = 45\nenv = { MODE = 'strict' }",
        "[environment]\ncpus = 2\nmemory_mb = 1024\nallow_internet = true",
        "[solution]\nenv = { KEY = 'v' }",
      ].join("\n"),
      "instruction.md": "\nDo the thing.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": "true\n",
    });
    const native = await writeTask(root, "same-native", {
      "task.md": [
        "---",
        "metadata: {difficulty: easy}",
        "agent: {timeout_sec: 90}",
        "verifier: {timeout_sec: 45, env: {MODE: strict}}",
        "sandbox: {cpus: 2, memory_mb: 1024, network_mode: public}",
        "oracle: {env: {KEY: v}}",
        "---",
        "Do the thing.",
      ].join("\n"),
      "environment/Dockerfile": "FROM debian:bookworm-slim\n",
      "verifier/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "oracle/solve.sh": "true\n",
    });
    const a = await loadTask(split);
    const b = await loadTask(native);
    assert.deepEqual(a.config, b.config);
    assert.equal(a.instruction, "Do the thing.");
    assert.equal(b.instruction, "Do the thing.");
    assert.equal(a.config.sandbox.networkMode, "public");
    assert.deepEqual(a.config.oracle.env, { KEY: "v" });
    assert.deepEqual([a.layout, a.verifierMount, a.solutionMount], ["split", "/tests", "/solution"]);
    assert.deepEqual([b.layout, b.verifierMount, b.solutionMount], ["native", "/verifier", "/oracle"]);
    assert.equal(a.verifierDir, path.join(split, "tests"));
    assert.equal(b.solutionDir, path.join(native, "oracle"));
    assert.equal(b.solveScript, "solve.sh");
    assert.equal(b.testScript, "test.sh");
    assert.equal(a.name, "same-split");
    assert.deepEqual(a.warnings, []);
  });

  it("fills upstream's defaults", async () => {
    const dir = await writeTask(root, "defaults", { ...MINIMAL_SPLIT_TASK, "task.toml": "" });
    const { config, dockerfile, environmentDir } = await loadTask(dir);
    assert.deepEqual(config, {
      agent: { timeoutSec: null, user: null, networkMode: null, promptPrefix: null },
      verifier: { timeoutSec: 600, env: {}, user: null, rewardRange: [0, 1] },
      sandbox: {
        networkMode: "no-network",
        allowedHosts: [],
        workdir: null,
        env: {},
        cpus: 1,
        memoryMb: 2048,
        storageMb: 10240,
        gpus: 0,
        dockerImage: null,
        buildTimeoutSec: 600,
        healthcheck: null,
        setupCommands: [],
      },
      oracle: { env: {}, timeoutSec: null },
      artifacts: [],
      metadata: {},
      steps: [],
      multiStepRewardStrategy: "mean",
    });
    assert.equal(environmentDir, path.join(dir, "environment"));
    assert.equal(dockerfile?.workdir, "/app");
  });

  it("lets task.md win over the split pair, and says the pair is ignored", async () => {
    const dir = await writeTask(root, "both-layouts", {
      ...MINIMAL_SPLIT_TASK,
      "task.toml": "[agent]\ntimeout_sec = 5\n",
      "task.md": "---\nagent:\n  timeout_sec: 77\n---\nFrom task.md.\n",
    });
    const task = await loadTask(dir);
    assert.equal(task.layout, "native");
    assert.equal(task.config.agent.timeoutSec, 77);
    assert.equal(task.instruction, "From task.md.");
    assert.ok(task.warnings.some((w) => w.includes("task.toml and instruction.md are ignored")));
  });

  it("takes the prompt from a reserved ## prompt heading when there is one", async () => {
    const dir = await writeTask(root, "prompt-heading", {
      ...MINIMAL_SPLIT_TASK,
      "task.md":
        "---\nname: x\n---\n# Title\n\n## prompt\n\nThe real prompt.\n\n## role:reviewer\n\nNot it.\n",
    });
    assert.equal((await loadTask(dir)).instruction, "The real prompt.");
  });

  it("applies the task.md shorthands", async () => {
    const dir = await writeTask(root, "shorthands", {
      "task.md":
        "---\nname: short\nimage: python:3.12-slim\nverifier: verifier/\noracle: oracle/\n---\nGo.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\n",
      "verifier/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "oracle/solve.sh": "true\n",
    });
    const task = await loadTask(dir);
    assert.equal(task.config.sandbox.dockerImage, "python:3.12-slim");
    assert.equal(task.verifierMount, "/verifier");
    assert.deepEqual(task.warnings, []);
  });

  it("keeps verifier/ authoritative even when it is empty: no fallback to tests/", async () => {
    const dir = await writeTask(root, "empty-verifier", { ...MINIMAL_SPLIT_TASK, verifier: null });
    await refuses(dir, "empty-verifier/verifier/test.sh: missing", "verifier/ exists, so tests/ is ignored");
  });

  it("keeps oracle/ authoritative: an oracle/ without solve.sh leaves no solve script", async () => {
    const dir = await writeTask(root, "empty-oracle", { ...MINIMAL_SPLIT_TASK, oracle: null });
    const task = await loadTask(dir);
    assert.equal(task.solutionDir, path.join(dir, "oracle"));
    assert.equal(task.solutionMount, "/oracle");
    assert.equal(task.solveScript, null);
    assert.ok(task.warnings.some((w) => w.includes("oracle has no solve.sh")));
  });

  it("has no solution when neither oracle/ nor solution/ exists", async () => {
    const { "solution/solve.sh": _, ...files } = MINIMAL_SPLIT_TASK;
    const task = await loadTask(await writeTask(root, "no-solution", files));
    assert.equal(task.solutionDir, null);
    assert.equal(task.solveScript, null);
  });

  it("maps the network settings: allow_internet, network_mode, allowlists", async () => {
    const net = async (name: string, env: string) =>
      loadTask(
        await writeTask(root, name, { ...MINIMAL_SPLIT_TASK, "task.toml": `[environment]\n${env}\n` }),
      );
    assert.equal((await net("net-legacy", "allow_internet = true")).config.sandbox.networkMode, "public");
    assert.equal((await net("net-off", "allow_internet = false")).config.sandbox.networkMode, "no-network");
    const allow = await net("net-allow", 'allowed_hosts = ["pypi.org"]');
    assert.equal(allow.config.sandbox.networkMode, "allowlist");
    assert.deepEqual(allow.config.sandbox.allowedHosts, ["pypi.org"]);
    assert.ok(
      allow.warnings.some((w) => w.includes("environment.allowed_hosts is accepted but not acted on")),
    );
    await refuses(
      await writeTask(root, "net-bad", {
        ...MINIMAL_SPLIT_TASK,
        "task.toml": '[environment]\nnetwork_mode = "allowlist"\n',
      }),
      "environment.network_mode",
      "allowed_hosts",
    );
    await refuses(
      await writeTask(root, "net-typo", {
        ...MINIMAL_SPLIT_TASK,
        "task.toml": '[environment]\nnetwork_mode = "none"\n',
      }),
      'environment.network_mode must be one of no-network, public, allowlist (got "none")',
    );
  });

  it("reads Harbor's size strings and says they are deprecated", async () => {
    const dir = await writeTask(root, "sizes", {
      ...MINIMAL_SPLIT_TASK,
      "task.toml": '[environment]\nmemory = "4G"\nstorage = "512M"\n',
    });
    const task = await loadTask(dir);
    assert.equal(task.config.sandbox.memoryMb, 4096);
    assert.equal(task.config.sandbox.storageMb, 512);
    assert.ok(
      task.warnings.some((w) => w.includes("environment.memory is deprecated; write memory_mb = 4096")),
    );
  });

  it("refuses wrong types with the field and the fix", async () => {
    const bad = async (name: string, toml: string) =>
      writeTask(root, name, { ...MINIMAL_SPLIT_TASK, "task.toml": toml });
    await refuses(
      await bad("type-abc", '[verifier]\ntimeout_sec = "abc"\n'),
      'verifier.timeout_sec must be a number of seconds greater than 0 (got "abc")',
      "write timeout_sec = 600",
    );
    await refuses(await bad("type-negative", "[agent]\ntimeout_sec = -5\n"), "agent.timeout_sec", "(got -5)");
    await refuses(
      await bad("type-narrow", "[verifier]\nreward_range = [0.5, 1]\n"),
      "verifier.reward_range may only widen [0, 1] (got [0.5, 1])",
      "[-1, 1]",
    );
    await refuses(await bad("type-cpus", '[environment]\ncpus = "two"\n'), "environment.cpus", '(got "two")');
    await refuses(
      await bad("type-env", "[verifier]\nenv = { A = [1] }\n"),
      "verifier.env.A must be a string",
    );
    await refuses(
      await bad("type-workdir", '[environment]\nworkdir = "app"\n'),
      "environment.workdir must be an absolute path",
    );
    await refuses(
      await bad("type-judge", '[verifier]\ntype = "llm-judge"\n'),
      'verifier.type = "llm-judge" is not supported',
    );
    const widened = await loadTask(await bad("type-widen", "[verifier]\nreward_range = [-1, 2]\n"));
    assert.deepEqual(widened.config.verifier.rewardRange, [-1, 2]);
  });

  it("counts every problem in its message, not only the first", async () => {
    const dir = await writeTask(root, "many", {
      ...MINIMAL_SPLIT_TASK,
      "task.toml": '[agent]\ntimeout_sec = "x"\n[verifier]\ntimeout_sec = "y"\n',
    });
    await refuses(dir, "agent.timeout_sec", "and 1 more problem(s)");
  });

  it("refuses both spellings of one section", async () => {
    const dir = await writeTask(root, "sandbox-twice", {
      ...MINIMAL_SPLIT_TASK,
      "task.md": "---\nsandbox: {cpus: 1}\nenvironment: {cpus: 2}\n---\nGo.\n",
    });
    await refuses(dir, "task.md: sandbox and environment are both set", "keep only sandbox");
    const oracle = await writeTask(root, "oracle-twice", {
      ...MINIMAL_SPLIT_TASK,
      "task.toml": "[oracle]\ntimeout_sec = 5\n[solution]\nenv = {}\n",
    });
    await refuses(oracle, "oracle and solution are both set");
  });

  it("refuses malformed TOML and YAML naming the file and line", async () => {
    await refuses(path.join(FIXTURES, "bad-toml"), "bad-toml/task.toml:4:", "malformed TOML");
    await refuses(path.join(FIXTURES, "bad-yaml"), /bad-yaml\/task\.md:[56]: malformed YAML frontmatter/);
    const unclosed = await writeTask(root, "unclosed", {
      ...MINIMAL_SPLIT_TASK,
      "task.md": "---\nname: x\nGo.\n",
    });
    await refuses(unclosed, "task.md:1: frontmatter opens with --- but never closes");
  });

  it("refuses the fixture's typo with the file, the dotted key and the suggestion", async () => {
    await refuses(
      path.join(FIXTURES, "unknown-key"),
      "unknown-key/task.toml",
      "verifier.timout_sec",
      "did you mean timeout_sec?",
    );
  });

  it("refuses a verifier folder without test.sh, a missing prompt, and non-tasks", async () => {
    await refuses(path.join(FIXTURES, "no-test-script"), "no-test-script/tests/test.sh: missing");
    const { "instruction.md": _, ...noPrompt } = MINIMAL_SPLIT_TASK;
    await refuses(await writeTask(root, "no-prompt", noPrompt), "instruction.md: missing");
    await refuses(
      await writeTask(root, "empty-prompt", { ...MINIMAL_SPLIT_TASK, "instruction.md": "  \n" }),
      "instruction.md is empty",
    );
    await refuses(
      await writeTask(root, "not-a-task", { "README.md": "hi" }),
      "is not a task folder",
      "task.md",
    );
    await refuses(path.join(root, "nowhere"), "does not exist");
  });

  it("loads without a Dockerfile (dockerfile null), keeps RUN steps without warning, and warns about symlinks", async () => {
    const { "environment/Dockerfile": _, ...noDocker } = MINIMAL_SPLIT_TASK;
    assert.equal((await loadTask(await writeTask(root, "no-docker", noDocker))).dockerfile, null);
    const dir = await writeTask(root, "runs", {
      ...MINIMAL_SPLIT_TASK,
      "environment/Dockerfile": "FROM debian:bookworm-slim\nRUN apt-get update\nRUN echo hi\n",
    });
    await fs.symlink("/etc/hostname", path.join(dir, "environment", "link"));
    const task = await loadTask(dir);
    assert.equal(task.dockerfile?.runSteps.length, 2);
    assert.ok(
      !task.warnings.some((w) => w.includes("RUN")),
      "RUN steps are valid; only the namespace plan warns",
    );
    assert.ok(task.warnings.some((w) => w.includes("contains symlinks") && w.includes("environment/link")));
  });
});

describe("loadTasks", () => {
  let root: string;
  before(async () => {
    root = await tempRoot();
  });
  after(() => removeRoot(root));

  it("loads every task in the order given", async () => {
    const b = await writeTask(root, "ok-b", MINIMAL_SPLIT_TASK);
    const a = await writeTask(root, "ok-a", MINIMAL_SPLIT_TASK);
    assert.deepEqual(
      (await loadTasks([b, a])).map((t) => t.name),
      ["ok-b", "ok-a"],
    );
  });

  it("refuses once, naming every broken task and every problem, and not the good ones", async () => {
    const good = await writeTask(root, "fine", MINIMAL_SPLIT_TASK);
    const twice = await writeTask(root, "two-bad", {
      ...MINIMAL_SPLIT_TASK,
      "task.toml": '[agent]\ntimeout_sec = "x"\n[verifier]\ntimeout_sec = "y"\n',
    });
    const once = await writeTask(root, "one-bad", { ...MINIMAL_SPLIT_TASK, "task.toml": "[verifier\n" });
    const err = await loadTasks([good, twice, once]).then(
      () => assert.fail("broken tasks must be refused"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof UserInputError, String(err));
    const [head, ...lines] = err.message.split("\n");
    assert.match(head ?? "", /^2 of 3 task\(s\) cannot run \(3 problem\(s\)\); nothing was started/);
    assert.equal(lines.length, 3, err.message);
    assert.match(lines[0] ?? "", /^ {2}two-bad: problem: .*agent\.timeout_sec/);
    assert.match(lines[1] ?? "", /^ {2}two-bad: problem: .*verifier\.timeout_sec/);
    assert.match(lines[2] ?? "", /^ {2}one-bad: problem: .*task\.toml:\d+:\d+: malformed TOML/);
    assert.doesNotMatch(err.message, /fine/);
  });

  it("keeps one broken task with one problem to the problem's own line", async () => {
    const once = await writeTask(root, "just-one", { ...MINIMAL_SPLIT_TASK, "tests/test.sh": "" });
    await fs.rm(path.join(once, "tests/test.sh"));
    const err = await loadTasks([once]).then(
      () => assert.fail("refused"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof UserInputError);
    assert.match(err.message, /^\S*just-one\/tests\/test\.sh: missing; add the test script/);
    assert.equal(err.message.split("\n").length, 1);
  });
});
