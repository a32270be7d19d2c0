// Upstream's spellings of a run, as its users type them: `--config FILE` (a YAML file of the run's
// flags) and `--sandbox docker` give the plan (--dry-run) of the flags they stand for.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { bench, EXAMPLES, useScratch } from "./testing/bench.js";

const scratch = useScratch("run-config");

async function plan(args: string[], env: Record<string, string> = {}) {
  const r = await bench(["run", ...args, "--dry-run"], { env });
  assert.equal(r.code, 0, r.stderr);
  // The moment each job's plan was made is the one thing two plans of one run may differ in.
  const p = JSON.parse(r.stdout);
  for (const j of p.jobs) delete j.plan.created_at;
  return p;
}

describe("bench run --config FILE", () => {
  it("gives the plan of the flags it holds, and a flag on the command line wins", async () => {
    const jobs = path.join(scratch(), "jobs");
    const file = path.join(scratch(), "run.yaml");
    await fs.writeFile(
      file,
      [
        `tasks_dir: ${path.join(EXAMPLES, "half-life")}`,
        "agent: bench-agent",
        "model: vllm/my-policy",
        "trials: 4",
        "concurrency: 2",
        `jobs_dir: ${jobs}`,
        "job_name: step-1",
        "sandbox: namespace",
        "reasoning_effort: low",
        "capture_tokens: true",
        "agent_env:",
        "  BENCHFLOW_PROVIDER_BASE_URL: http://gpu:8000/v1",
        "  EXTRA: one",
        "",
      ].join("\n"),
    );
    const flags = [
      path.join(EXAMPLES, "half-life"),
      "-a",
      "bench-agent",
      "-m",
      "vllm/my-policy",
      "--trials",
      "4",
      "-j",
      "2",
      "--jobs-dir",
      jobs,
      "--job-name",
      "step-1",
      "--sandbox",
      "namespace",
      "--reasoning-effort",
      "low",
      "--capture-tokens",
      "--agent-env",
      "BENCHFLOW_PROVIDER_BASE_URL=http://gpu:8000/v1",
      "--agent-env",
      "EXTRA=one",
    ];
    const fromFile = await plan(["--config", file]);
    assert.deepEqual(fromFile, await plan(flags));
    assert.equal(fromFile.policy.base_url, "http://gpu:8000/v1");
    assert.equal(fromFile.jobs.length, 4);
    // The command line over the file: two repeats, not four; the task typed here, not tasks_dir.
    const over = await plan([path.join(EXAMPLES, "hello"), "--config", file, "--trials", "2"]);
    assert.equal(over.jobs.length, 2);
    assert.deepEqual(
      over.jobs[0].plan.tasks.map((t: { name: string }) => t.name),
      ["hello"],
    );
  });

  it("an unknown key is refused with the file, the key and the nearest flag", async () => {
    const file = path.join(scratch(), "typo.yaml");
    await fs.writeFile(file, "agent: oracle\ntrails: 4\n");
    const r = await bench(["run", path.join(EXAMPLES, "hello"), "--config", file, "--dry-run"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `--config ${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: trails is not a flag of bench run: did you mean trials \\(--trials\\)\\?`,
      ),
    );
  });
});

describe("upstream's other spellings", () => {
  it("--tasks-dir is the task argument; a flag we do not take is refused with what to do instead", async () => {
    const args = [
      "-a",
      "oracle",
      "--job-name",
      "t",
      "--jobs-dir",
      path.join(scratch(), "t"),
      "--sandbox",
      "namespace",
    ];
    assert.deepEqual(
      await plan(["--tasks-dir", path.join(EXAMPLES, "hello"), ...args]),
      await plan([path.join(EXAMPLES, "hello"), ...args]),
    );
    for (const [extra, said] of [
      [
        ["--usage-tracking", "required"],
        /--usage-tracking is upstream BenchFlow's, not bench run's: the gateway records every model call/,
      ],
      [
        ["--matrix", "m.yaml"],
        /--matrix is upstream BenchFlow's, not bench run's: run bench run once per model/,
      ],
      [
        ["--sandbox", "daytona"],
        /--sandbox daytona is upstream's remote sandbox; .*--sandbox container \(or docker, podman\)/,
      ],
    ] as const) {
      const r = await bench(["run", path.join(EXAMPLES, "hello"), ...args, ...extra, "--dry-run"]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, said);
    }
  });
});

describe("--sandbox docker", () => {
  const docker = "/var/run/docker.sock";
  it("is the container sandbox on Docker: the plan of --sandbox container with DOCKER_HOST at its socket", {
    skip: !existsSync(docker) && "no Docker socket here",
  }, async () => {
    const args = [
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--job-name",
      "j",
      "--jobs-dir",
      path.join(scratch(), "d"),
    ];
    const viaDocker = await plan([...args, "--sandbox", "docker"], { DOCKER_HOST: "" });
    assert.equal(viaDocker.sandbox, "container");
    assert.deepEqual(
      viaDocker,
      await plan([...args, "--sandbox", "container"], { DOCKER_HOST: `unix://${docker}` }),
    );
  });
});
