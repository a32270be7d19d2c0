// examples/tasks/jq-report end to end in containers: its Dockerfile installs a Debian package (jq),
// the reference solution scores 1 and an untouched workspace scores 0. The verifier's files enter
// the container only when its turn comes, as in a rollout.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadTask } from "../../task/load.js";
import type { Task } from "../../task/types.js";
import { ContainerBackend } from "./backend.js";
import type { ContainerSandbox } from "./lifecycle/sandbox.js";
import { engineOrSkip } from "./testing/kit.js";

const TASK_DIR = fileURLToPath(new URL("../../../examples/tasks/jq-report", import.meta.url));
let task: Task;
let tmp: string;

before(async () => {
  task = await loadTask(TASK_DIR);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bf-jq-"));
});

after(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function verify(sandbox: ContainerSandbox, name: string): Promise<string> {
  await sandbox.killAgentProcesses();
  await sandbox.upload(task.verifierDir, task.verifierMount);
  const run = await sandbox.exec(
    `bash ${task.verifierMount}/${task.testScript} > /logs/verifier/test-stdout.txt 2>&1`,
    {
      user: "root",
      timeoutSec: task.config.verifier.timeoutSec,
    },
  );
  assert.equal(run.exitCode, 0, run.stderr);
  const out = path.join(tmp, name);
  await sandbox.download("/logs/verifier", out);
  return (await fs.readFile(path.join(out, "reward.txt"), "utf8")).trim();
}

describe("examples/tasks/jq-report in a container", () => {
  it("builds an image with jq; the solution scores 1 and doing nothing scores 0", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const backend = new ContainerBackend({ buildLogDir: path.join(tmp, "builds") });
    const spec = { task, jobName: "jq", network: false };
    const [oracle, nop] = await Promise.all([
      backend.create({ ...spec, rolloutName: "jq-report__oracle" }),
      backend.create({ ...spec, rolloutName: "jq-report__nop" }),
    ]);
    try {
      const before = await oracle.exec("test -e /tests || test -e /solution || echo clean", {
        user: "agent",
      });
      assert.equal(before.stdout, "clean\n");
      await oracle.upload(task.solutionDir as string, task.solutionMount);
      const solve = await oracle.exec(`bash ${task.solutionMount}/${task.solveScript}`, { user: "agent" });
      assert.equal(solve.exitCode, 0, solve.stderr);
      assert.equal(await verify(oracle, "oracle"), "1");
      assert.equal(await verify(nop, "nop"), "0");
      const log = await fs.readFile(path.join(tmp, "builds", "jq-report.log"), "utf8");
      assert.match(log, /jq|reused/);
    } finally {
      await Promise.all([oracle.stop(), nop.stop()]);
    }
  });
});
