// What verifier hardening and a separate verifier add to one rollout, next to the same rollout with
// neither (hardening off, shared verifier), in the same run: medians over sequential rollouts, on
// the namespace sandbox and, where an engine answers, the container sandbox.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Evaluation } from "../src/job/evaluation.js";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import { writeFiles } from "../test/testing/bench.js";
import { type BenchRow, median } from "./report.js";

/** A workspace with what hardening looks at: build files, a package, a git repository. */
async function realisticTask(dir: string): Promise<string> {
  const files: Record<string, string> = {
    "instruction.md": "Make /app/calc/add.py's add() return a + b.\n",
    "task.toml":
      'version = "1.0"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n[environment]\nnetwork_mode = "no-network"\n',
    "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\nCOPY app/ /app/\n",
    "environment/app/Makefile": "test:\n\t@echo ok\n",
    "environment/app/pyproject.toml": '[project]\nname = "calc"\n',
    "environment/app/requirements.txt": "pytest\n",
    // A repository, as real workspaces have: the git_config step reads its config.
    "environment/app/.git/HEAD": "ref: refs/heads/main\n",
    "environment/app/.git/config":
      "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = task\n",
    "environment/app/calc/__init__.py": "",
    "environment/app/calc/add.py": "def add(a, b):\n    return 0\n",
    "solution/solve.sh": "#!/bin/bash\nprintf 'def add(a, b):\\n    return a + b\\n' > /app/calc/add.py\n",
    "tests/test.sh":
      '#!/bin/bash\nif grep -q "return a + b" /app/calc/add.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n',
  };
  for (let i = 0; i < 40; i++) files[`environment/app/calc/m${i}.py`] = `X = ${i}\n`;
  await writeFiles(dir, files);
  return dir;
}

type Mode = "bare" | "hardened" | "separate";

async function perRolloutMs(
  task: string,
  jobs: string,
  sandbox: "namespace" | "container",
  mode: Mode,
  n: number,
) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const result = await new Evaluation({
      tasks: task,
      agent: "oracle",
      jobsDir: path.join(jobs, `${mode}-${i}`),
      sandbox,
      verifierHardening: mode === "bare" ? "off" : "on",
      verifierEnvironmentMode: mode === "separate" ? "separate" : "shared",
    }).run();
    times.push(performance.now() - t0);
    if (result.results[0]?.rewards?.reward !== 1)
      throw new Error(`bench: the ${mode} ${sandbox} trial did not score 1.0`);
  }
  return median(times);
}

async function rowsFor(
  sandbox: "namespace" | "container",
  task: string,
  jobs: string,
  n: number,
): Promise<BenchRow[]> {
  await perRolloutMs(task, jobs, sandbox, "bare", 1); // warm: the image is built once, outside the timing
  const bare = await perRolloutMs(task, jobs, sandbox, "bare", n);
  const hardened = await perRolloutMs(task, jobs, sandbox, "hardened", n);
  const separate = await perRolloutMs(task, jobs, sandbox, "separate", n);
  const base = `no hardening, shared verifier (${sandbox})`;
  return [
    {
      name: `one trial, hardening on (${sandbox}, median of ${n})`,
      value: hardened,
      unit: "ms",
      baseline: bare,
      baselineName: base,
    },
    { name: `hardening adds per trial (${sandbox})`, value: hardened - bare, unit: "ms" },
    {
      name: `one trial, separate verifier (${sandbox}, median of ${n})`,
      value: separate,
      unit: "ms",
      baseline: bare,
      baselineName: base,
    },
    { name: `separate verifier adds per trial (${sandbox})`, value: separate - bare, unit: "ms" },
  ];
}

export async function benchHardening(): Promise<BenchRow[]> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-harden-"));
  try {
    const task = await realisticTask(path.join(root, "calc"));
    const rows = await rowsFor("namespace", task, path.join(root, "jobs-ns"), 15);
    if ((await new ContainerBackend().unavailableReason()) === null)
      rows.push(...(await rowsFor("container", task, path.join(root, "jobs-ct"), 7)));
    return rows;
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}
