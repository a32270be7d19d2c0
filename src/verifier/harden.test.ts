// Verifier hardening against a real namespace sandbox (bwrap, the agent a non-root user): what the
// agent planted is removed or undone, and what the task and the image shipped stays.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createNamespaceBackend } from "../sandbox/namespace/backend.js";
import { makeSpec, makeTask, tempDir } from "../sandbox/namespace/testing/kit.js";
import type { Sandbox } from "../sandbox/types.js";
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

const hostRoot = process.getuid?.() === 0;
describe("verifier hardening (namespace sandbox)", {
  skip: !hostRoot && "needs root for a non-root agent",
}, () => {
  const cleanups: (() => Promise<void>)[] = [];
  let sandbox: Sandbox;

  const sh = async (command: string, user: "agent" | "root" = "root") => {
    const r = await sandbox.exec(command, { user, cwd: "/" });
    assert.equal(r.exitCode, 0, r.stderr);
    return r.stdout;
  };

  before(async () => {
    const task = await tempDir("harden-task");
    cleanups.push(task.cleanup);
    sandbox = await createNamespaceBackend({ tool: "bwrap" }).create(makeSpec(makeTask({ dir: task.dir })));
    cleanups.push(() => sandbox.stop());
    assert.equal(sandbox.agentIsNonRoot, true);
  });
  const withEnv = async () => {
    const task = await tempDir("harden-task-env");
    cleanups.push(task.cleanup);
    const env = { PATH: "/app/.venv/bin:/opt/tool/bin:/usr/bin:/bin", PYTHONPATH: "/opt/lib:/tmp/lib" };
    const s = await createNamespaceBackend({ tool: "bwrap" }).create(
      makeSpec(makeTask({ dir: task.dir, env })),
    );
    cleanups.push(() => s.stop());
    return s;
  };
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("removes or restores what the agent planted, and keeps what the task and image shipped", async () => {
    await sh(SHIPPED);
    const snapshot = await snapshotForVerifier(sandbox);
    cleanups.push(() => snapshot.dispose());
    assert.equal(snapshot.python, true);
    await sh(PLANTS, "agent");
    const record = await hardenForVerifier(sandbox, snapshot, { mount: "/tests", cleanupConftests: true });
    assert.deepEqual(counts(record), EXPECTED_COUNTS);
    assert.deepEqual((await sh(LEFT_COMMAND)).trim().split("\n"), EXPECTED_LEFT);
    assert.equal(await sh("cat /app/Makefile"), "all:\n\techo task\n");
    assert.equal(await sh("stat -c %U /app/Makefile"), "agent\n");
    assert.equal(await sh(`cat ${SITE}/_venv.pth`), "/app/src\n");
    assert.equal(record.agent_user, "non-root");
    assert.equal(record.env.PYTHONDONTWRITEBYTECODE, "1");
    assert.match(
      record.env.PATH ?? "",
      /^\/usr\/local\/sbin:\/usr\/local\/bin:\/usr\/sbin:\/usr\/bin:\/sbin:\/bin$/,
    );
  });

  it("pins PATH and PYTHONPATH to what the agent cannot write, and leaves conftests alone when asked", async () => {
    const s = await withEnv();
    const run = async (command: string, user: "agent" | "root") =>
      assert.equal((await s.exec(command, { user, cwd: "/" })).exitCode, 0);
    await run(
      "mkdir -p /opt/tool/bin /app/pkg && echo 'X = 1' > /app/pkg/conftest.py && chown -R agent /app",
      "root",
    );
    const snapshot = await snapshotForVerifier(s);
    cleanups.push(() => snapshot.dispose());
    await run("echo 'import os' > /app/conftest.py && echo 'Y = 2' > /app/pkg/conftest.py", "agent");
    const record = await hardenForVerifier(s, snapshot, { mount: "/tests", cleanupConftests: false });
    assert.equal(
      record.env.PATH,
      "/opt/tool/bin:/usr/bin:/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin",
    );
    assert.equal(record.env.PYTHONPATH, "/opt/lib");
    assert.deepEqual(record.dropped_env_entries, { PATH: ["/app/.venv/bin"], PYTHONPATH: ["/tmp/lib"] });
    assert.deepEqual(counts(record).conftests, undefined);
    assert.deepEqual(counts(record).build_files, undefined);
    const left = await s.exec("cat /app/conftest.py /app/pkg/conftest.py", { user: "root" });
    assert.equal(left.stdout, "import os\nY = 2\n");
  });

  it("a later step's snapshot takes the step's own files as the task's", async () => {
    const s = await withEnv();
    const first = await snapshotForVerifier(s);
    // The step's workdir files arrive (as the rollout uploads them), then the snapshot is taken again.
    assert.equal((await s.exec("printf 'all:\\n\\ttrue\\n' > /app/Makefile", { user: "root" })).exitCode, 0);
    const step = await snapshotForVerifier(s, first);
    await first.dispose();
    cleanups.push(() => step.dispose());
    assert.deepEqual(step.imageEnv, first.imageEnv);
    const record = await hardenForVerifier(s, step, { mount: "/tests", cleanupConftests: true });
    assert.equal(counts(record).build_files, undefined);
    assert.equal((await s.exec("cat /app/Makefile", { user: "root" })).stdout, "all:\n\ttrue\n");
  });
});
