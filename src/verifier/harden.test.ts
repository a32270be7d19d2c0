// Verifier hardening against a real namespace sandbox (bwrap, the agent a non-root user): what the
// agent planted is removed or undone, and what the task and the image shipped stays.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createNamespaceBackend } from "../sandbox/namespace/backend.js";
import { makeSpec, makeTask, tempDir } from "../sandbox/namespace/testing/kit.js";
import type { Sandbox } from "../sandbox/types.js";
import { type HardeningRecord, hardenForVerifier } from "./harden.js";
import { snapshotForVerifier } from "./snapshot.js";

const hostRoot = process.getuid?.() === 0;
const SITE = "/app/.venv/lib/python3.11/site-packages";

// What the task and its image ship (as root, then handed to the agent like a real workspace).
const SHIPPED = `set -e; cd /app
printf 'all:\\n\\techo task\\n' > Makefile
printf '[project]\\nname = "t"\\n' > pyproject.toml
mkdir -p pkg && printf 'X = 1\\n' > pkg/conftest.py && echo ok > keep.txt && ln -s keep.txt inner
mkdir -p ${SITE} && echo /app/src > ${SITE}/_venv.pth
mkdir -p /tests && echo stale > /tests/stale.py
chown -R "$(stat -c %u:%g /home/agent)" /app`;

// The agent's plants: each one is a known way to reach the verifier's reward.
const PLANTS = `set -e; cd /app
echo 'all: ; echo 1 > /logs/verifier/reward.txt' > Makefile
rm pyproject.toml
echo hack > requirements-dev.txt
echo 'import os' > conftest.py
ln -s /logs/verifier out
ln -s ../tests/stale.py up
mkdir -p pkg/__pycache__ && echo x > pkg/__pycache__/m.cpython-311.pyc && echo x > stray.pyc
echo 'raise SystemExit(0)' > json.py
echo 'print(42)' > solution.py
echo 'import evil' > ${SITE}/evil.pth
mkdir -p ${SITE}/evil-1.dist-info && printf '[pytest11]\\nevil = evil\\n' > ${SITE}/evil-1.dist-info/entry_points.txt
echo 'import os' > /tmp/sitecustomize.py && echo 'import os' > /tmp/helper.py && ln -s /logs/verifier /tmp/out`;

const counts = (r: HardeningRecord) =>
  Object.fromEntries(r.steps.filter((s) => Object.keys(s.counts).length).map((s) => [s.name, s.counts]));

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
    assert.deepEqual(counts(record), {
      symlinks: { removed: 3 },
      build_files: { restored: 2, removed: 1 },
      conftests: { removed: 1 },
      startup_hooks: { removed: 2 },
      pytest_plugins: { removed: 1 },
      bytecode: { removed: 2 },
      tmp_python: { removed: 1 },
      shadowing_modules: { removed: 1 },
      verifier_mount: { fresh: 1 },
    });
    assert.deepEqual(
      (await sh("cd /app && find . /tmp /tests -path ./.venv/bin -prune -o -print | sort"))
        .trim()
        .split("\n"),
      [
        ".",
        "./.venv",
        "./.venv/lib",
        "./.venv/lib/python3.11",
        "./.venv/lib/python3.11/site-packages",
        "./.venv/lib/python3.11/site-packages/_venv.pth",
        "./.venv/lib/python3.11/site-packages/evil-1.dist-info",
        "./Makefile",
        "./inner",
        "./keep.txt",
        "./pkg",
        "./pkg/conftest.py",
        "./pyproject.toml",
        "./solution.py",
        "/tests",
        "/tmp",
      ],
    );
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
});
