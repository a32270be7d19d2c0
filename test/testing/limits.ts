// Rollouts that spend their sandbox's limits (disk, processes, memory) next to an honest sibling in
// the same job at -j 2: the hog must stay within its limits and still be scored by its verifier,
// the sibling must score 1.0. Shared by the namespace and the container suites.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { type BenchRun, rollouts, startBench, writeFiles } from "./bench.js";

export interface Hog {
  name: string;
  /** [environment] lines of the hog's task.toml. */
  environment: string;
  /** What the hog's agent does after leaving its marker. */
  script: string;
  /** config.json limits key the hog must go past. */
  limit: "storage_mb" | "pids" | "memory_mb";
}

// Every hog is bounded on its own as well (a count, or the agent's timeout), so a sandbox that
// fails to hold its limit fails the test instead of filling CI's disk or memory.
export const HOGS: Hog[] = [
  {
    name: "fills-disk",
    environment: "storage_mb = 64",
    // 64 MiB chunks, at most 1 GiB in all: past the limit, never without end.
    script:
      "for i in $(seq 1 16); do dd if=/dev/zero of=/app/fill-$i bs=1M count=64 status=none || break; done",
    limit: "storage_mb",
  },
  {
    name: "forks",
    environment: "memory_mb = 1024",
    // Sleepers past the limit (4096), at most 6000, each gone within a minute anyway; the agent's timeout ends it.
    script: "for i in $(seq 1 6000); do sleep 60 & done 2>/dev/null; wait",
    limit: "pids",
  },
  {
    name: "allocates",
    environment: "memory_mb = 128",
    // tail keeps a line that never ends: memory until the limit kills it (1.5 GiB at most).
    script: "head -c 1500M /dev/zero | tail; true",
    limit: "memory_mb",
  },
];

const SIBLING = "sibling";

/** A job folder with the hog task and an honest sibling. */
export async function hogTasks(dir: string, hog: Hog): Promise<string> {
  const dockerfile = "FROM debian:bookworm-slim\nWORKDIR /app\n";
  const test = (check: string) =>
    `#!/bin/bash\nif ${check}; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\necho checked\n`;
  const toml = (env: string, timeout: number) =>
    `version = "1.0"\n[agent]\ntimeout_sec = ${timeout}\n[verifier]\ntimeout_sec = 60\n[environment]\nnetwork_mode = "no-network"\n${env}\n`;
  await writeFiles(path.join(dir, hog.name), {
    "instruction.md": "Leave /app/marker, then spend the sandbox.\n",
    "environment/Dockerfile": dockerfile,
    "task.toml": toml(hog.environment, 25),
    "solution/solve.sh": `#!/bin/bash\necho done > /app/marker\n${hog.script}\n`,
    "tests/test.sh": test("[ -f /app/marker ]"),
  });
  await writeFiles(path.join(dir, SIBLING), {
    "instruction.md": "Write hello to /app/hello.txt.\n",
    "environment/Dockerfile": dockerfile,
    "task.toml": toml("memory_mb = 256", 60),
    "solution/solve.sh": "#!/bin/bash\necho hello > /app/hello.txt\n",
    "tests/test.sh": test('[ "$(cat /app/hello.txt)" = hello ]'),
  });
  return dir;
}

/** `bench run` over both tasks at -j 2, interrupted (then killed) if it outlives an outer bound. */
export function runHogJob(tasks: string, jobs: string, sandbox: string): Promise<BenchRun> {
  const child = startBench([
    "run",
    tasks,
    "-a",
    "oracle",
    "-j",
    "2",
    "--sandbox",
    sandbox,
    "--jobs-dir",
    jobs,
    "-q",
  ]);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  const stop = setTimeout(() => child.kill("SIGTERM"), 240_000);
  const kill = setTimeout(() => child.kill("SIGKILL"), 270_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(stop);
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** The hog was scored by its verifier and went past its limit; the sibling scored 1.0. */
export async function assertHogContained(jobs: string, hog: Hog): Promise<Record<string, any>> {
  const found = await rollouts(jobs);
  const byTask = new Map(found.map((r) => [r.result?.task_name, r]));
  const mine = byTask.get(hog.name);
  const sibling = byTask.get(SIBLING);
  assert.ok(mine?.result && sibling?.result, `both rollouts finished: ${found.map((r) => r.dir).join(", ")}`);
  assert.equal(
    sibling.result.rewards?.reward,
    1,
    `the sibling scored 1.0: ${JSON.stringify(sibling.result)}`,
  );
  // Scored by its verifier: the marker was there, so the honest test gives 1.
  assert.equal(mine.result.rewards?.reward, 1, `the hog was scored: ${JSON.stringify(mine.result)}`);
  assert.equal(mine.result.verifier_error_category, null);
  const config = JSON.parse(await fs.readFile(path.join(mine.dir, "config.json"), "utf8"));
  const record = config.limits?.[hog.limit];
  assert.ok(record, `config.json records the ${hog.limit} limit: ${JSON.stringify(config.limits)}`);
  assert.ok(!String(record.applied).startsWith("not_applied"), `${hog.limit} applied: ${record.applied}`);
  return config;
}
