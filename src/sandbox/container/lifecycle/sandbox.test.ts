// The container sandbox on a real engine (Podman's Docker API here): one small task image, the
// Sandbox verbs, the task's settings, timeouts that kill whole process trees, and cleanup.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import type { Task } from "../../../task/types.js";
import { ContainerBackend } from "../backend.js";
import type { Engine } from "../engine/engine.js";
import { buildTaskImage } from "../image/image.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import { LABEL, listContainers } from "./cleanup.js";
import type { ContainerSandbox } from "./sandbox.js";

const JOB = `ctest-${process.pid}`;
let task: Task;
let engine: Engine | null = null;
let sandbox: ContainerSandbox;
let tmp: string;
const backend = new ContainerBackend();

async function ready(t: TestContext): Promise<boolean> {
  engine ??= await engineOrSkip(t);
  return engine !== null;
}

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bf-csb-"));
  task = await makeTask({
    name: "container-basics",
    dockerfile:
      "FROM debian:bookworm-slim\nENV FROM_IMAGE=yes\nWORKDIR /work\nCOPY seed.txt /work/seed.txt\n",
    files: { "seed.txt": "seed\n" },
    workdir: "/work",
    configure: (c) => {
      c.sandbox.env = { TASK_ENV: "task" };
      c.sandbox.cpus = 1.5;
      c.sandbox.memoryMb = 300;
    },
  });
});

after(async () => {
  await sandbox?.stop();
  await removeTaskDir(task);
  await fs.rm(tmp, { recursive: true, force: true });
});

describe("container sandbox", () => {
  it("creates a container from the task's image with the task's settings", async (t) => {
    if (!(await ready(t))) return;
    sandbox = await backend.create({
      task,
      jobName: JOB,
      rolloutName: "basics__1",
      network: false,
      env: { SPEC_ENV: "spec" },
    });
    assert.equal(sandbox.kind, "container");
    assert.equal(sandbox.workdir, "/work");
    assert.equal(sandbox.agentIsNonRoot, true);
    assert.equal(sandbox.networkEnforcement, "enforced");
    const info = await engine?.client.json<{
      Config: { Labels: Record<string, string> };
      HostConfig: { Memory: number; NanoCpus: number; NetworkMode: string };
    }>("GET", `/containers/${sandbox.id}/json`);
    assert.equal(info?.HostConfig.Memory, 300 * 1024 * 1024);
    assert.equal(info?.HostConfig.NanoCpus, 1.5e9);
    assert.equal(info?.Config.Labels[LABEL.job], JOB);
    assert.equal(info?.Config.Labels[LABEL.rollout], "basics__1");
    assert.equal(info?.Config.Labels[LABEL.owner], `${process.pid}@${os.hostname()}`);
  });

  it("runs the agent's commands as the non-root agent, in the workspace, with every env layer", async (t) => {
    if (!(await ready(t))) return;
    const r = await sandbox.exec(
      'id -un; pwd; echo "$FROM_IMAGE $TASK_ENV $SPEC_ENV $CALL_ENV $HOME"; cat seed.txt',
      {
        user: "agent",
        env: { CALL_ENV: "call" },
      },
    );
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, "agent\n/work\nyes task spec call /home/agent\nseed\n");
    const root = await sandbox.exec("id -u; echo oops >&2; exit 7", { user: "root", cwd: "/tmp" });
    assert.deepEqual([root.exitCode, root.stdout, root.stderr], [7, "0\n", "oops\n"]);
    const where = await sandbox.exec("pwd", { user: "agent", cwd: "/logs" });
    assert.equal(where.stdout, "/logs\n");
  });

  it("lets the agent write its workspace, logs and home but not /logs/verifier", async (t) => {
    if (!(await ready(t))) return;
    const r = await sandbox.exec(
      "touch /work/a /logs/agent/a /logs/artifacts/a ~/a && echo wrote; touch /logs/verifier/x 2>/dev/null || echo denied",
      { user: "agent" },
    );
    assert.equal(r.stdout, "wrote\ndenied\n");
    const owner = await sandbox.exec("stat -c %U /logs/verifier", { user: "root" });
    assert.equal(owner.stdout, "root\n");
  });

  it("uploads files and folders and downloads them back", async (t) => {
    if (!(await ready(t))) return;
    const src = path.join(tmp, "up");
    await fs.mkdir(path.join(src, "nested"), { recursive: true });
    await fs.writeFile(path.join(src, "test.sh"), "echo 1 > /logs/verifier/reward.txt\n", { mode: 0o755 });
    await fs.writeFile(path.join(src, "nested", "data.txt"), "data\n");
    await sandbox.upload(src, "/tests");
    await sandbox.upload(path.join(src, "nested", "data.txt"), "/opt/deep/one.txt");
    const r = await sandbox.exec(
      "stat -c '%a %U' /tests/test.sh; cat /tests/nested/data.txt /opt/deep/one.txt; bash /tests/test.sh",
    );
    assert.equal(r.stdout, "755 root\ndata\ndata\n");
    await sandbox.download("/logs/verifier", path.join(tmp, "down", "verifier"));
    assert.equal(await fs.readFile(path.join(tmp, "down", "verifier", "reward.txt"), "utf8"), "1\n");
    await sandbox.download("/work/seed.txt", path.join(tmp, "down", "seed.txt"));
    assert.equal(await fs.readFile(path.join(tmp, "down", "seed.txt"), "utf8"), "seed\n");
    await sandbox.download("/no/such/path", path.join(tmp, "down", "missing"));
    await assert.rejects(fs.access(path.join(tmp, "down", "missing")));
  });

  it("kills the whole process tree when an exec times out", async (t) => {
    if (!(await ready(t))) return;
    // The limit runs from before the exec starts: it must leave the tree time to be there before
    // the kill (a slow engine takes a while to start an exec), else the kill has nothing to find.
    const r = await sandbox.exec("(sleep 301 &); sleep 302 & setsid sleep 303 & sleep 304; echo finished", {
      user: "agent",
      timeoutSec: 5,
    });
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, null);
    assert.doesNotMatch(r.stdout, /finished/);
    const left = await sandbox.exec("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '", { user: "root" });
    assert.doesNotMatch(left.stdout, /sleep 30[1-4]/);
  });

  it("stops an exec when its signal aborts", async (t) => {
    if (!(await ready(t))) return;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await sandbox.exec("sleep 305", { user: "agent", signal: controller.signal });
    assert.deepEqual([r.aborted, r.timedOut, r.exitCode], [true, false, null]);
  });

  it("keeps only the tail of a large output", async (t) => {
    if (!(await ready(t))) return;
    const r = await sandbox.exec("seq 1 100000", { maxOutputBytes: 1000 });
    assert.equal(r.exitCode, 0);
    assert.ok(r.stdout.length <= 1000);
    assert.ok(r.stdout.endsWith("99999\n100000\n"));
  });

  it("kills every process the agent left behind, and only those", async (t) => {
    if (!(await ready(t))) return;
    await sandbox.exec("nohup sleep 401 >/dev/null 2>&1 & setsid sleep 402 >/dev/null 2>&1 &", {
      user: "agent",
    });
    await sandbox.exec("nohup sleep 403 >/dev/null 2>&1 &", { user: "root" });
    await sandbox.killAgentProcesses();
    const left = await sandbox.exec("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '", { user: "root" });
    assert.doesNotMatch(left.stdout, /sleep 40[12]/);
    assert.match(left.stdout, /sleep 403/);
  });

  it("reuses the built image: a second create does not rebuild", async (t) => {
    if (!(await ready(t))) return;
    const again = await buildTaskImage(task, { engine: engine ?? undefined });
    assert.equal(again.built, false);
    assert.equal(again.image, sandbox.image);
    const progress: string[] = [];
    const quiet = new ContainerBackend({ onBuildProgress: (_task, line) => progress.push(line) });
    const second = await quiet.create({ task, jobName: JOB, rolloutName: "basics__2", network: false });
    try {
      assert.deepEqual(progress, []);
      assert.equal(second.image, sandbox.image);
    } finally {
      await second.stop();
    }
  });

  it("runs 8 containers at once and leaves none behind after stop", async (t) => {
    if (!(await ready(t))) return;
    const rollouts = Array.from({ length: 8 }, (_, i) => `parallel__${i}`);
    const boxes = await Promise.all(
      rollouts.map((rolloutName) =>
        backend.create({
          task,
          jobName: `${JOB}-par`,
          rolloutName,
          network: false,
          env: { ROLLOUT: rolloutName },
        }),
      ),
    );
    const outputs = await Promise.all(boxes.map((b) => b.exec("echo $ROLLOUT", { user: "agent" })));
    assert.deepEqual(
      outputs.map((o) => o.stdout.trim()),
      rollouts,
    );
    assert.equal(new Set(boxes.map((b) => b.id)).size, 8);
    assert.equal((await listContainers(engine as Engine, `${LABEL.job}=${JOB}-par`)).length, 8);
    await Promise.all(boxes.map((b) => b.stop()));
    await boxes[0]?.stop();
    assert.deepEqual(await listContainers(engine as Engine, `${LABEL.job}=${JOB}-par`), []);
  });
});
