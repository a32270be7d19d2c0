// bench run on the container sandbox with a policy that goes past its task's limits: the oracle
// allocates past memory_mb, then fills the disk past storage_mb. Each rollout is still scored by its
// verifier (going past a limit is the policy's doing), config.json says what was applied and what was
// exceeded, a limit the engine could not apply is warned about once for the whole run, and an honest
// sibling task in the same jobs at -j 2 still scores 1.0. The oracle's writer and allocator are
// bounded of themselves (1 GiB, 600 MiB, `timeout`), so a broken limit cannot fill the disk or stall.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, EXAMPLES, rollouts, useScratch, writeFiles } from "./testing/bench.js";

const scratch = useScratch("container-limits");

const GREEDY = {
  "task.toml": `version = "1.0"
[agent]
timeout_sec = 300
[verifier]
timeout_sec = 120
[environment]
network_mode = "no-network"
cpus = 1
memory_mb = 256
storage_mb = 100
`,
  "instruction.md": "Use more than you are given.\n",
  "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
  "solution/solve.sh": `#!/bin/bash
# 600 MiB in one growing line (tail keeps it whole): past memory_mb, so the kernel kills tail.
head -c 600M /dev/zero | tail > /dev/null
echo "tail $((PIPESTATUS[1]))" > /app/after-oom.txt
# Then at most 1 GiB of disk, in 8 MiB files at about 80 MiB/s, within 120 s.
timeout 120 bash -c 'for i in $(seq 1 128); do head -c 8M /dev/zero > /app/fill.$i || exit 3; sleep 0.1; done'
echo finished > /app/finished.txt
`,
  "tests/test.sh": `#!/bin/bash
mkdir -p /logs/verifier
du -sm /app | cut -f1 > /logs/verifier/app_mb.txt
# Scored: it lived through its OOM kill, and the verifier has room past the agent's disk limit.
if grep -qx 'tail 137' /app/after-oom.txt && head -c 150M /dev/zero > /tmp/verifier.bin; then
  echo 1 > /logs/verifier/reward.txt; echo "survived pass"
else
  echo 0 > /logs/verifier/reward.txt; echo "survived fail"
fi
`,
};

describe("bench run --sandbox container: a policy past its limits", () => {
  it("scores it, records its limits and what it exceeded, warns once, and its sibling scores 1.0", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const tasks = path.join(scratch(), "tasks");
    await writeFiles(path.join(tasks, "greedy"), GREEDY);
    await fs.cp(path.join(EXAMPLES, "hello"), path.join(tasks, "hello"), { recursive: true });
    const jobs = path.join(scratch(), "jobs");
    const run = await bench(
      [
        "run",
        tasks,
        "-a",
        "oracle",
        "--trials",
        "2",
        "-j",
        "2",
        "--jobs-dir",
        jobs,
        "--sandbox",
        "container",
      ],
      {},
    );
    assert.equal(run.code, 0, run.stderr);
    const found = await rollouts(jobs);
    assert.equal(found.length, 4, run.stdout);
    for (const r of found)
      assert.equal(r.result?.rewards?.reward, 1, `${r.dir}: ${JSON.stringify(r.result)}`);
    const greedy = found.filter((r) => path.basename(r.dir).startsWith("greedy__"));
    assert.equal(greedy.length, 2);
    let watched = false;
    for (const r of greedy) {
      const config = JSON.parse(await fs.readFile(path.join(r.dir, "config.json"), "utf8"));
      const { limits } = config;
      assert.deepEqual(limits.pids, { requested: 4096, applied: "engine", exceeded: false });
      assert.deepEqual(limits.memory_mb, { requested: 256, applied: "engine", exceeded: true });
      assert.deepEqual(limits.cpus, { requested: 1, applied: "engine" });
      assert.equal(limits.storage_mb.requested, 100);
      assert.equal(limits.storage_mb.exceeded, true);
      assert.match(limits.storage_mb.applied, /^(engine|watched)$/);
      watched = limits.storage_mb.applied === "watched";
      // Stopped soon after passing the limit (watched), or at it (enforced): never the whole 1 GiB.
      const mb = Number(await fs.readFile(path.join(r.dir, "verifier/app_mb.txt"), "utf8"));
      assert.ok(mb < (watched ? 600 : 101), `${mb} MiB written with storage_mb = 100`);
      assert.equal(
        config.sandbox_warnings.some((w: string) => w.startsWith("storage_mb is watched")),
        watched,
      );
    }
    // About the engine, not a task: one line for the whole run (2 jobs, 2 tasks), naming no task.
    const lines = (run.stdout + run.stderr).split("\n").filter((l) => l.includes("storage_mb is watched"));
    if (watched) {
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.match(
        lines[0] as string,
        /^warning: storage_mb is watched, not enforced: .*section Resource limits\)$/,
      );
    } else assert.deepEqual(lines, []);
  });
});
