// Verifier hardening in a real container (the same script as the namespace sandbox's): the shared
// scenario with a non-root agent, and a root agent whose processes escape the marker that
// killAgentProcesses looks for, and whose startup hook lands in the system's site-packages.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { ContainerBackend } from "../sandbox/container/backend.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../sandbox/container/testing/kit.js";
import type { Sandbox } from "../sandbox/types.js";
import type { Task } from "../task/types.js";
import { hardenForVerifier } from "./harden.js";
import { snapshotForVerifier } from "./snapshot.js";
import {
  counts,
  EXPECTED_COUNTS,
  EXPECTED_LEFT,
  LEFT_COMMAND,
  PLANTS,
  SHIPPED,
  SITE,
} from "./testing/scenario.js";

// The image has a Python, so the stdlib's names are read from it.
const DOCKERFILE =
  "FROM debian:bookworm-slim\nRUN apt-get update && apt-get install -y --no-install-recommends python3-minimal && rm -rf /var/lib/apt/lists/*\n";
const tasks: Task[] = [];
after(async () => {
  for (const t of tasks) await removeTaskDir(t);
});

const sh = async (sandbox: Sandbox, command: string, user: "agent" | "root" = "root") => {
  const r = await sandbox.exec(command, { user, cwd: "/" });
  assert.equal(r.exitCode, 0, r.stderr);
  return r.stdout;
};

describe("verifier hardening (container)", () => {
  it("removes or restores what a non-root agent planted, and keeps what was shipped", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await makeTask({ name: "harden-nonroot", dockerfile: DOCKERFILE });
    tasks.push(task);
    const sandbox = await new ContainerBackend().create({
      task,
      jobName: "harden",
      rolloutName: "h__1",
      network: false,
    });
    try {
      assert.equal(sandbox.agentIsNonRoot, true);
      await sh(sandbox, SHIPPED);
      const snapshot = await snapshotForVerifier(sandbox);
      await sh(sandbox, PLANTS, "agent");
      await sandbox.killAgentProcesses();
      const record = await hardenForVerifier(sandbox, snapshot, { mount: "/tests", cleanupConftests: true });
      await snapshot.dispose();
      assert.deepEqual(counts(record), EXPECTED_COUNTS);
      assert.deepEqual((await sh(sandbox, LEFT_COMMAND)).trim().split("\n"), EXPECTED_LEFT);
      assert.equal(await sh(sandbox, `cat /app/Makefile ${SITE}/_venv.pth`), "all:\n\techo task\n/app/src\n");
    } finally {
      await sandbox.stop();
    }
  });

  it("kills a root agent's processes whatever their environment, and keeps the ones from before it", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await makeTask({ name: "harden-root", dockerfile: DOCKERFILE });
    tasks.push(task);
    const backend = new ContainerBackend({ agentUser: "root" });
    const sandbox = await backend.create({ task, jobName: "harden", rolloutName: "r__1", network: false });
    try {
      assert.equal(sandbox.agentIsNonRoot, false);
      // A service the environment started before the agent (a setup command, say).
      await sh(sandbox, "nohup sleep 601 >/dev/null 2>&1 &");
      const snapshot = await snapshotForVerifier(sandbox);
      // env -i: no BENCHFLOW_ROLE marker, so killAgentProcesses alone misses it.
      await sh(sandbox, "env -i /usr/bin/setsid /bin/sleep 602 >/dev/null 2>&1 < /dev/null &", "agent");
      const site = (await sh(sandbox, "python3 -c 'import site; print(site.getsitepackages()[0])'")).trim();
      await sh(
        sandbox,
        `mkdir -p ${site} && echo 'import os' > ${site}/evil.pth && echo 'import os' > /conftest.py`,
        "agent",
      );
      await sandbox.killAgentProcesses();
      const seen = await sh(sandbox, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '");
      assert.match(seen, /sleep 602/, "the marker sweep alone leaves it");
      const record = await hardenForVerifier(sandbox, snapshot, { mount: "/tests", cleanupConftests: true });
      await snapshot.dispose();
      assert.equal(record.agent_user, "root");
      assert.ok((counts(record).processes?.killed ?? 0) >= 1, JSON.stringify(record.steps[0]));
      assert.deepEqual(record.steps.find((s) => s.name === "startup_hooks")?.paths.removed, [
        `${site}/evil.pth`,
      ]);
      // pytest looks for conftest.py and its ini file up from /tests, so at / too.
      assert.deepEqual(record.steps.find((s) => s.name === "conftests")?.paths.removed, ["/conftest.py"]);
      const left = await sh(sandbox, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '");
      assert.doesNotMatch(left, /sleep 602/);
      assert.match(left, /sleep 601/);
      assert.match(left, /sleep infinity/);
    } finally {
      await sandbox.stop();
    }
  });
});
