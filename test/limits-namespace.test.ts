// A whole rollout through the CLI whose agent fills its disk and allocates without end, in the
// namespace sandbox as host root: the limits stop it, the verifier still writes its reward, the
// rollout is scored, and config.json says which limits held and which the agent went past.
// The agent's commands run under `timeout` and the task's own agent timeout.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { benchOracle, rollouts, useScratch, writeFiles } from "./testing/bench.js";

const hostRoot = process.getuid?.() === 0;
const scratch = useScratch("limits-ns");

const TASK = {
  "task.toml": `version = "1.0"

[agent]
timeout_sec = 120
user = "root"

[verifier]
timeout_sec = 60

[environment]
network_mode = "no-network"
storage_mb = 64
memory_mb = 64
`,
  "instruction.md": "Write done to /app/result.txt.\n",
  "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
  "solution/solve.sh": `#!/bin/bash
echo done > /app/result.txt
timeout 60 dd if=/dev/zero of=/app/fill bs=1M 2>/dev/null
timeout 60 python3 -c 'a = []
while True: a.append(bytearray(1 << 20))'
exit 0
`,
  "tests/test.sh": `#!/bin/bash
dd if=/dev/zero of=/tmp/verifier-pad bs=1M count=8 2>/dev/null || exit 3
if [ "$(cat /app/result.txt)" = done ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
`,
};

describe("limits in a namespace rollout", {
  skip: !hostRoot && "the disk and cgroups need host root",
}, () => {
  it("an agent that fills its disk and its memory is stopped, and the rollout is scored", {
    timeout: 600_000,
  }, async () => {
    const taskDir = path.join(scratch(), "limits-task");
    await writeFiles(taskDir, TASK);
    const jobsDir = path.join(scratch(), "jobs");
    const run = await benchOracle(taskDir, jobsDir);
    const [found] = await rollouts(jobsDir);
    assert.equal(found?.result?.error, null, `${run.stdout}${run.stderr}`);
    assert.equal(found?.result?.verifier_error, null, `${run.stdout}${run.stderr}`);
    assert.equal(found?.result?.rewards?.reward, 1);
    const config = JSON.parse(await fs.readFile(path.join(found?.dir ?? "", "config.json"), "utf8"));
    assert.equal(config.sandbox_user, "root");
    assert.deepEqual(config.limits, {
      storage_mb: { requested: 64, applied: "filesystem", exceeded: true },
      memory_mb: { requested: 64, applied: "cgroup", exceeded: true },
      pids: { requested: 4096, applied: "cgroup", exceeded: false },
    });
    assert.equal(run.code, 0, run.stderr);
  });
});
