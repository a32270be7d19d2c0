// A failure the policy can cause is the policy's. A saboteur whose failing rollouts break the
// verifier (an answer file the verifier cannot decode, an answer too big to read in time) must earn
// what an honest policy that fails earns: 0, scored, its group kept. Only a verifier that fails on its
// own (its controls fail on clean runs, or it cannot start) is masked, and then the run says so.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { registerAgent } from "../src/agents/registry.js";
import type { Agent } from "../src/agents/types.js";
import type { SandboxBackend } from "../src/index.js";
import { Evaluation } from "../src/job/evaluation.js";
import { settleGroup } from "../src/jobs-dir/groups/groups.js";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { selectBackend } from "../src/sandbox/select.js";
import { writeTask } from "../src/task/testing/task-dir.js";
import { bench, useScratch } from "./testing/bench.js";

const scratch = useScratch("attribution");

// An honest verifier as many are written: it reads the answer as UTF-8 (and so crashes on bytes that
// are not), within its time limit.
const VERIFIER = `#!/bin/bash
python3 - <<'PY'
import pathlib
p = pathlib.Path("/app/answer.txt")
text = p.read_text("utf-8") if p.exists() else ""
pathlib.Path("/logs/verifier/reward.txt").write_text("1" if text.strip() == "42" else "0")
PY
`;

function taskFiles(solve: string, verifier = VERIFIER, toml = ""): Record<string, string> {
  return {
    "task.toml": `[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 8\n${toml}`,
    "instruction.md": "Write 42 to /app/answer.txt.\n",
    "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
    "tests/test.sh": verifier,
    "solution/solve.sh": `#!/bin/bash\n${solve}\n`,
  };
}

const RIGHT = "echo 42 > /app/answer.txt";
const WRONG = "echo 41 > /app/answer.txt";
/** Sabotage: bytes the verifier cannot decode (it crashes, no reward). */
const UNDECODABLE = "printf '\\xff\\xfe\\xfd' > /app/answer.txt";
/** Sabotage: an answer that never ends (a pipe nobody writes): the verifier runs past its limit. */
const ENDLESS = "rm -f /app/answer.txt && mkfifo /app/answer.txt";

/**
 * A deterministic policy: on task tN it runs the Nth script as the agent user. The tasks' own
 * solutions stay honest, as their controls need them.
 */
function scriptedPolicy(name: string, scripts: string[]): string {
  const agent: Agent = {
    name,
    usesModel: false,
    seesSolution: false,
    async run(ctx) {
      const script = scripts[Number(ctx.task.name.slice(1)) - 1] ?? "";
      await ctx.sandbox.exec(script, { user: "agent", timeoutSec: ctx.timeoutSec, signal: ctx.signal });
      return { nToolCalls: 1, trajectorySource: null };
    },
  };
  registerAgent(name, () => agent);
  return name;
}

/** The policy on tasks t1..tN (honest verifiers and solutions) as one job; every rollout, read back. */
async function evaluate(name: string, scripts: string[], backend?: SandboxBackend) {
  const root = path.join(scratch(), name);
  for (let i = 0; i < scripts.length; i++)
    await writeTask(path.join(root, "tasks"), `t${i + 1}`, taskFiles(RIGHT));
  const result = await new Evaluation({
    tasks: path.join(root, "tasks"),
    agent: scriptedPolicy(`policy-${name}`, scripts),
    jobsDir: path.join(root, "jobs"),
    sandbox: "namespace",
    retryAttempts: 0,
    ...(backend ? { backend } : {}),
  }).run();
  const job = await loadJob(result.jobs[0]?.jobDir as string);
  return { result, job };
}

describe("a saboteur earns what an honest failing policy earns", () => {
  it("same mean, failures scored 0 with their reason, the group not withheld", async () => {
    const honest = await evaluate("honest", [RIGHT, WRONG, WRONG, WRONG]);
    const saboteur = await evaluate("saboteur", [RIGHT, UNDECODABLE, ENDLESS, UNDECODABLE]);
    assert.equal(honest.result.jobs[0]?.summary.mean_reward, 0.25);
    assert.equal(saboteur.result.jobs[0]?.summary.mean_reward, 0.25);
    assert.equal(saboteur.result.jobs[0]?.summary.masked, 0);
    const sabotaged = saboteur.result.results.filter((r) => r.task_name !== "t1");
    for (const r of sabotaged) {
      assert.equal(r.attribution, "score", JSON.stringify(r));
      if (r.attribution_reason === "scored") {
        // The fresh copy of the workspace holds only the agent's files (no pipe): scored as they are.
        assert.equal(r.rewards?.reward, 0);
        assert.equal(r.verifier_rerun?.reward, 0);
        continue;
      }
      assert.equal(r.attribution_reason, "verifier_error");
      assert.equal(r.rewards, null, "result.json keeps what the verifier wrote: nothing");
      assert.ok(r.verifier_error_category, "the verifier's own category stays");
      assert.equal(r.verifier_verdict, "sound");
      assert.equal(r.verifier_rerun?.reward, null, "the rerun on a fresh copy failed the same way");
    }
    // Pooled as one group (a trainer's --group-by agent,model): every member in the baseline.
    const members = saboteur.job.trials;
    assert.deepEqual(members.map((m) => m.reward).sort(), [0, 0, 0, 1]);
    const settled = settleGroup(members, "grpo");
    assert.equal(settled.withheld, null);
    assert.ok(settled.advantages.every((a) => a !== null));
    // The verdicts are cached beside the jobs: a later run asks no controls again.
    const controls = await fs.readdir(path.join(scratch(), "saboteur", "jobs", ".controls"));
    assert.ok(controls.filter((f) => f.endsWith(".json")).length >= 2);
  });
});

describe("unscored on demand: a policy that fills its disk's inodes", () => {
  for (const sandbox of ["namespace", "container"] as const) {
    it(`${sandbox}: scored 0 with its reason, never masked`, async () => {
      const root = path.join(scratch(), `inodes-${sandbox}`);
      // Files until the disk has no inode left (xargs: thousands a second, with the image's tools only).
      const flood = "echo 41 > /app/answer.txt\ncd /app && seq 1 400000 | xargs touch 2>/dev/null; true";
      const grep = `#!/bin/bash
if grep -qx 42 /app/answer.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
`;
      await writeTask(
        path.join(root, "tasks"),
        "t1",
        taskFiles(RIGHT, grep, "[environment]\nstorage_mb = 32\n"),
      );
      const result = await new Evaluation({
        tasks: path.join(root, "tasks", "t1"),
        agent: scriptedPolicy(`policy-inodes-${sandbox}`, [flood]),
        jobsDir: path.join(root, "jobs"),
        sandbox,
        retryAttempts: 0,
      }).run();
      const r = result.results[0];
      assert.equal(r?.attribution, "score", JSON.stringify(r));
      assert.ok(
        r?.attribution_reason === "scored" || r?.attribution_reason === "verifier_error",
        r?.attribution_reason ?? "",
      );
      assert.equal(r?.rewards?.reward ?? 0, 0);
      assert.equal(result.jobs[0]?.summary.masked, 0);
    });
  }
});

describe("a verifier that fails on its own is masked, and the run says so", () => {
  it("failing at random on its controls: a task problem, masked, named in a warning", async () => {
    // Fails on the agent's answer always, and on clean runs nine times in ten.
    const flaky = `#!/bin/bash
grep -q 13 /app/answer.txt 2>/dev/null && exit 1
[ $((RANDOM % 10)) -eq 0 ] || exit 1
echo 1 > /logs/verifier/reward.txt
`;
    const root = path.join(scratch(), "flaky");
    await writeTask(path.join(root, "tasks"), "t1", taskFiles(RIGHT, flaky));
    const warnings: string[] = [];
    const result = await new Evaluation({
      tasks: path.join(root, "tasks", "t1"),
      agent: scriptedPolicy("policy-flaky", ["echo 13 > /app/answer.txt"]),
      jobsDir: path.join(root, "jobs"),
      sandbox: "namespace",
      onEvent: (e) => {
        if (e.type === "warning") warnings.push(e.message);
      },
    }).run();
    const r = result.results[0];
    assert.equal(r?.attribution, "mask");
    assert.equal(r?.attribution_reason, "verifier_crash_clean_run");
    assert.equal(r?.verifier_verdict, "crashes_on_clean_run");
    assert.equal(result.jobs[0]?.summary.masked, 1);
    assert.equal(result.jobs[0]?.summary.mean_reward, null);
    assert.ok(
      warnings.some((w) => /t1: its verifier fails on clean runs/.test(w)),
      warnings.join("\n"),
    );
  });

  it("a task without a solution cannot be proven: masked, and the run names it", async () => {
    const root = path.join(scratch(), "unproven");
    // It crashes when the answer is missing, which is what nop leaves.
    const files = taskFiles(RIGHT, VERIFIER.replace('if p.exists() else ""', ""));
    delete files["solution/solve.sh"];
    await writeTask(path.join(root, "tasks"), "nosolution", files);
    const warnings: string[] = [];
    const result = await new Evaluation({
      tasks: path.join(root, "tasks", "nosolution"),
      agent: "nop",
      jobsDir: path.join(root, "jobs"),
      sandbox: "namespace",
      onEvent: (e) => {
        if (e.type === "warning") warnings.push(e.message);
      },
    }).run();
    const r = result.results[0];
    assert.equal(r?.attribution, "mask", JSON.stringify(r));
    assert.equal(r?.attribution_reason, "verifier_unproven");
    assert.equal(r?.verifier_verdict, "unproven", JSON.stringify(r));
    assert.ok(
      warnings.some((w) => /nosolution: unproven/.test(w)),
      warnings.join("\n"),
    );
  });

  it("a verifier whose infrastructure fails (it cannot start) is masked, on clean runs too", async () => {
    const { backend: real } = await selectBackend("namespace");
    // The real sandbox, but the verifier's tests never arrive: our infrastructure failing at the verifier.
    const broken: SandboxBackend = {
      ...real,
      kind: real.kind,
      unavailableReason: () => real.unavailableReason(),
      async create(options) {
        const box = await real.create(options);
        const upload = box.upload.bind(box);
        box.upload = async (from, to) => {
          if (to === "/tests") throw new Error("the verifier's sandbox refused the upload (injected)");
          return upload(from, to);
        };
        return box;
      },
    };
    const { result } = await evaluate("infra", [WRONG], broken);
    const r = result.results[0];
    assert.equal(r?.attribution, "mask", JSON.stringify(r));
    assert.equal(r?.attribution_reason, "verifier_infra");
    assert.equal(r?.verifier_verdict, "crashes_on_clean_run");
  });
});

describe("bench tasks check --controls", () => {
  it("runs the controls ahead of time: a sound verifier passes, one that fails on a clean run is a problem", async () => {
    const root = path.join(scratch(), "check");
    const sound = await writeTask(root, "sound", taskFiles(RIGHT));
    // nop leaves no answer, and this verifier crashes on a missing file: a crash on a clean run.
    const fragile = await writeTask(
      root,
      "fragile",
      taskFiles(RIGHT, VERIFIER.replace('if p.exists() else ""', "")),
    );
    const jobsDir = path.join(root, "jobs");
    const check = (task: string) =>
      bench(["tasks", "check", task, "--controls", "--sandbox", "namespace", "--jobs-dir", jobsDir]);
    const ok = await check(sound);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(
      ok.stdout,
      /sound: controls on the namespace sandbox: sound \(oracle 1\.0 1\.0, nop 0\.0 0\.0\)/,
    );
    const bad = await check(fragile);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(
      bad.stdout,
      /fragile: controls on the namespace sandbox: crashes_on_clean_run \(oracle 1\.0 1\.0, nop verifier_failure verifier_failure\)/,
    );
    assert.match(bad.stdout, /fragile: problem: .*its verifier fails on clean runs/);
    // Cached where a run of the same jobs folder finds them.
    const cached = (await fs.readdir(path.join(jobsDir, ".controls"))).filter((f) => f.endsWith(".json"));
    assert.equal(cached.length, 2);
  });
});
