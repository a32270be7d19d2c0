// One error style for flags, files and variables: one line on stderr (what, where, the fix) and a
// non-zero exit; never commander's help dumped after it, never the wrong culprit named.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { type BenchRun, bench, EXAMPLES, rollouts, startBench, useScratch } from "./testing/bench.js";
import { closedPort } from "./testing/outage.js";

const HELLO = path.join(EXAMPLES, "hello");
const NS = ["--sandbox", "namespace"];

function oneLine(run: BenchRun, what: string): string {
  assert.equal(run.code, 2, `${what}: exit 2 (${run.stderr})`);
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /Usage:|Options:/, `${what}: no help after the error`);
  assert.equal(run.stdout, "", `${what}: nothing on stdout`);
  return lines[0] as string;
}

describe("flag errors: one line each, in one style", () => {
  it("--trials abc and --trials 0 read alike, naming the flag and what it takes", async () => {
    const [abc, zero] = await Promise.all([
      bench(["run", HELLO, "-a", "oracle", "--trials", "abc", ...NS]),
      bench(["run", HELLO, "-a", "oracle", "--trials", "0", ...NS]),
    ]);
    assert.equal(
      oneLine(abc, "--trials abc"),
      'bench run: --trials "abc": expected a whole number of at least 1; see bench run --help',
    );
    assert.equal(
      oneLine(zero, "--trials 0"),
      'bench run: --trials "0": expected a whole number of at least 1; see bench run --help',
    );
  });

  it("--agnet oracle is an unknown option with a suggestion, not a missing -a", async () => {
    const line = oneLine(await bench(["run", HELLO, "--agnet", "oracle", ...NS]), "--agnet");
    assert.equal(line, "bench run: unknown option --agnet; did you mean --agent?");
  });

  it("a missing required option, argument or command is one line naming it", async () => {
    const [noAgent, noTask, noOut, typo, noScript] = await Promise.all([
      bench(["run", HELLO, ...NS]),
      bench(["run", "-a", "oracle"]),
      bench(["train", "convert", "jobs"]),
      bench(["trian", "convert"]),
      bench(["policy", "scripted"]),
    ]);
    assert.match(
      oneLine(noAgent, "no -a"),
      /^bench run: -a, --agent <agent> is required \(agent: oracle, nop/,
    );
    assert.equal(oneLine(noTask, "no task"), "bench run: missing <task-or-dir>; see bench run --help");
    assert.match(oneLine(noOut, "no --out"), /^bench train convert: -o, --out <file> is required/);
    assert.equal(oneLine(typo, "trian"), "bench: unknown command trian; did you mean train?");
    assert.match(oneLine(noScript, "no --script"), /^bench policy scripted: --script <file> is required/);
  });

  it("BENCHFLOW_SANDBOX=bogus names the variable, not the --sandbox flag nobody typed", async () => {
    const line = oneLine(
      await bench(["run", HELLO, "-a", "oracle", "--dry-run"], { env: { BENCHFLOW_SANDBOX: "bogus" } }),
      "BENCHFLOW_SANDBOX",
    );
    assert.match(
      line,
      /^bench: BENCHFLOW_SANDBOX="bogus" is not a sandbox: set it to auto, namespace or container/,
    );
    assert.doesNotMatch(line, /--sandbox must/);
    const executor = oneLine(
      await bench(["run", HELLO, "-a", "oracle", "--dry-run", ...NS], {
        env: { BENCHFLOW_EXECUTOR: "bogus" },
      }),
      "BENCHFLOW_EXECUTOR",
    );
    assert.match(executor, /^bench: BENCHFLOW_EXECUTOR="bogus" is not an executor: set it to local or slurm/);
    const flag = oneLine(
      await bench(["run", HELLO, "-a", "oracle", "--sandbox", "bogus"]),
      "--sandbox bogus",
    );
    assert.equal(
      flag,
      'bench run: --sandbox "bogus": expected auto, namespace, container, docker or podman; see bench run --help',
    );
  });

  it("a DOCKER_HOST that does not answer is an error naming it, not a silent fallback", async () => {
    const run = await bench(["run", HELLO, "-a", "oracle", "--dry-run"], {
      env: { DOCKER_HOST: "unix:///nonexistent/benchflow-cli.sock" },
    });
    const line = oneLine(run, "dead DOCKER_HOST");
    assert.match(
      line,
      /^bench: DOCKER_HOST=unix:\/\/\/nonexistent\/benchflow-cli\.sock does not answer: .*; start that engine, fix DOCKER_HOST, or unset it/,
    );
  });
});

describe("messages that name the right thing", () => {
  const scratch = useScratch("cli-errors");

  it("a stream on a file says it is not a folder, at once, also when following", async () => {
    const file = path.join(scratch(), "rows.jsonl");
    await fs.writeFile(file, "");
    const child = startBench(["train", "stream", file]);
    // Only a guard against the old endless wait; the command answers at once.
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const code = await new Promise((r) => child.on("close", r));
    clearTimeout(guard);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /rows\.jsonl is a file, not a folder; give a job folder or a folder of jobs/);
  });

  it("a dead --base-url: the endpoint never answered, with its URL and the fix (not 'answered 502')", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const jobs = path.join(scratch(), "jobs");
    const run = await bench([
      "run",
      HELLO,
      "-a",
      "bench-agent",
      "-m",
      "vllm/x",
      "--base-url",
      url,
      "--retry-attempts",
      "0",
      "--jobs-dir",
      jobs,
      "-q",
      ...NS,
    ]);
    assert.equal(run.code, 1, run.stderr);
    const [found] = await rollouts(jobs);
    const error = String(found?.result?.error);
    assert.ok(
      error.includes(`the endpoint ${url} never answered: connection refused`),
      `result.json error: ${error}`,
    );
    assert.match(error, /start the model server or fix the base URL \(--base-url\)/);
    assert.doesNotMatch(error + run.stdout, /answered 502/);
  });
});
