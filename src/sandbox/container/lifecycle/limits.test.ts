// The task's limits on a real engine (Podman here; CI again on Docker): what the container is made
// with, a fork bomb held at the pids limit, an allocation past memory_mb killed while the container
// lives on, a disk filled past storage_mb stopped (by the engine, or by the watch), and each time
// the verifier runs afterwards with room of its own. Every writer, forker and allocator here runs
// under an outer bound of its own (a count, a size, `timeout`), so a broken limit cannot fill the
// disk or stall the suite.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import type { Task } from "../../../task/types.js";
import { runVerifier } from "../../../verifier/run.js";
import { DEFAULT_PIDS_LIMIT } from "../../types.js";
import { ContainerBackend } from "../backend.js";
import type { Engine } from "../engine/engine.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import { LABEL, listContainers } from "./cleanup.js";
import { parseCounters, readLimitCounters, storageOptRefusal } from "./limits.js";
import type { ContainerSandbox } from "./sandbox.js";

const JOB = `climits-${process.pid}`;
const tasks: Task[] = [];
const boxes: ContainerSandbox[] = [];
const dirs: string[] = [];

after(async () => {
  await Promise.all(boxes.map((b) => b.stop()));
  await Promise.all(tasks.map(removeTaskDir));
  await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
});

async function limitTask(name: string, test: string, configure: (c: Task["config"]) => void): Promise<Task> {
  const task = await makeTask({
    name,
    dockerfile: "FROM debian:bookworm-slim\nWORKDIR /app\n",
    workdir: "/app",
    tests: { "test.sh": test },
    configure,
  });
  tasks.push(task);
  return task;
}

async function start(backend: ContainerBackend, task: Task, rolloutName: string): Promise<ContainerSandbox> {
  const box = await backend.create({ task, jobName: JOB, rolloutName, network: false });
  boxes.push(box);
  return box;
}

/** As runRollout does after the agent: its processes killed, the verifier's room made, the test run. */
async function verify(box: ContainerSandbox, task: Task) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-climits-"));
  dirs.push(dir);
  return runVerifier(box, task, dir);
}

async function running(engine: Engine, box: ContainerSandbox): Promise<boolean> {
  const info = await engine.client.json<{ State: { Running: boolean } }>("GET", `/containers/${box.id}/json`);
  return info.State.Running;
}

/** Polls until check() holds; a bound against a hang only (generous: the machine is shared). */
async function until(what: string, check: () => Promise<boolean>, boundSec = 120): Promise<void> {
  const deadline = Date.now() + boundSec * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${boundSec}s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("container limits", () => {
  it("creates the container with pids, memory (no swap past it), CPUs, and a disk limit applied or watched", async (t: TestContext) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const task = await limitTask("limits-record", "echo 1 > /logs/verifier/reward.txt\n", (c) => {
      c.sandbox.memoryMb = 300;
      c.sandbox.cpus = 1.5;
      c.sandbox.storageMb = 700;
    });
    const box = await start(new ContainerBackend(), task, "record__1");
    const info = await engine.client.json<{
      HostConfig: {
        PidsLimit: number;
        Memory: number;
        MemorySwap: number;
        NanoCpus: number;
        StorageOpt?: unknown;
      };
    }>("GET", `/containers/${box.id}/json`);
    assert.equal(info.HostConfig.PidsLimit, DEFAULT_PIDS_LIMIT);
    assert.equal(info.HostConfig.Memory, 300 * 1024 * 1024);
    assert.equal(info.HostConfig.MemorySwap, 300 * 1024 * 1024);
    assert.equal(info.HostConfig.NanoCpus, 1.5e9);
    // What the kernel holds the container to, read from inside (cgroup v1 here; v2 elsewhere).
    const inside = await box.exec(
      "cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.swap.max",
      { user: "root" },
    );
    const [pids, mem, swap] = inside.stdout.trim().split("\n");
    assert.equal(pids, String(DEFAULT_PIDS_LIMIT));
    assert.equal(mem, String(300 * 1024 * 1024));
    // v1: memory+swap equal to memory; v2: no swap at all.
    assert.ok(swap === String(300 * 1024 * 1024) || swap === "0", `swap limit ${swap}`);
    const refusal = await storageOptRefusal(engine, box.image, 700);
    const enforced = refusal === null;
    assert.deepEqual(box.limits, {
      pids: { requested: DEFAULT_PIDS_LIMIT, applied: "engine" },
      memory_mb: { requested: 300, applied: "engine" },
      cpus: { requested: 1.5, applied: "engine" },
      storage_mb: { requested: 700, applied: enforced ? "engine" : "watched" },
    });
    const warning = box.warnings.filter((w) => w.startsWith("storage_mb"));
    if (enforced) assert.deepEqual(warning, []);
    else {
      assert.deepEqual(warning, [
        `storage_mb is watched, not enforced: ${engine.name} cannot cap a container's disk here (${refusal}); the agent is stopped within about a second of passing it (docs/write-a-task.md, section Resource limits)`,
      ]);
      // overlay on ext4 (this machine, and most): both engines answer the same.
      assert.match(
        refusal,
        /--storage-opt is supported only for overlay over xfs with 'pquota' mount option/,
      );
    }
    // The probe's answer is kept: a second sandbox asks nothing and says the same.
    const again = await start(new ContainerBackend(), task, "record__2");
    assert.deepEqual(again.warnings, box.warnings);
    assert.deepEqual(again.limits, box.limits);
  });

  it("gives a compose task's sidecars the same process and memory limits as main", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const task = await makeTask({
      name: "limits-compose",
      dockerfile: "FROM debian:bookworm-slim\n",
      files: {
        "docker-compose.yaml":
          'services:\n  side:\n    image: debian:bookworm-slim\n    command: ["sleep", "infinity"]\n',
      },
      configure: (c) => {
        c.sandbox.memoryMb = 320;
      },
    });
    tasks.push(task);
    const box = await start(new ContainerBackend(), task, "compose__1");
    const [side] = await listContainers(engine, `${LABEL.rollout}=compose__1`).then((all) =>
      all.filter((c) => c.Labels?.["benchflow.service"] === "side"),
    );
    assert.ok(side, "the sidecar");
    const info = await engine.client.json<{
      HostConfig: { PidsLimit: number; Memory: number; MemorySwap: number };
    }>("GET", `/containers/${side.Id}/json`);
    assert.deepEqual(
      [info.HostConfig.PidsLimit, info.HostConfig.Memory, info.HostConfig.MemorySwap],
      [DEFAULT_PIDS_LIMIT, 320 * 1024 * 1024, 320 * 1024 * 1024],
    );
    assert.equal(box.limits.memory_mb?.requested, 320);
  });

  it("holds a fork bomb at the pids limit; the agent's processes are killed and the verifier runs", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const limit = 128;
    const task = await limitTask(
      "limits-forks",
      // The verifier forks freely once the bomb is gone.
      'n=$(for i in $(seq 1 20); do sh -c "echo $i"; done | wc -l); [ "$n" = 20 ] && echo 1 > /logs/verifier/reward.txt\n',
      (c) => {
        c.sandbox.cpus = 1;
      },
    );
    const box = await start(new ContainerBackend({ pidsLimit: limit }), task, "forks__1");
    // Outer bounds: `timeout` ends the bomb's root after 120 s, and the kill below ends the rest.
    await box.exec("timeout 120 bash -c 'b(){ b|b& }; b' >/dev/null 2>&1 &", {
      user: "agent",
      timeoutSec: 300,
    });
    await until(
      "a fork refused at the pids limit",
      async () => ((await readLimitCounters(engine, box.id)).pidsRefused ?? 0) > 0,
    );
    // At the limit even the reading exec can fail to start (the engine's init cannot fork): retry.
    let pids: number | null = null;
    await until("a reading of pids.current", async () => {
      const counters = await readLimitCounters(engine, box.id);
      pids = counters.read ? counters.pids : null;
      return pids != null;
    });
    // The reading exec itself joins the cgroup without a fork, so it may stand one above the limit.
    assert.ok(Number(pids) <= limit + 2, `pids.current ${pids} with a limit of ${limit}`);
    const outcome = await verify(box, task);
    assert.equal(outcome.rewards?.reward, 1, JSON.stringify(outcome));
    assert.equal(box.limits.pids?.exceeded, true);
    assert.equal(box.limits.memory_mb?.exceeded, false);
    assert.equal(await running(engine, box), true);
  });

  it("kills an allocation past memory_mb inside the container, which lives on for the verifier", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const task = await limitTask(
      "limits-memory",
      "grep -qx 'after 137' /app/after.txt && grep -lx sleep /proc/[0-9]*/comm >/dev/null && echo 1 > /logs/verifier/reward.txt\n",
      (c) => {
        c.sandbox.memoryMb = 200;
      },
    );
    const box = await start(new ContainerBackend(), task, "memory__1");
    // tail keeps a line with no newline whole: 600 MiB of zeros is one allocation that only grows.
    const r = await box.exec(
      'head -c 600M /dev/zero | tail > /dev/null; echo "after $((PIPESTATUS[1]))" > after.txt',
      {
        user: "agent",
        timeoutSec: 120,
      },
    );
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(await running(engine, box), true);
    const outcome = await verify(box, task);
    assert.equal(outcome.rewards?.reward, 1, JSON.stringify(outcome));
    assert.equal(box.limits.memory_mb?.exceeded, true);
    assert.equal(box.limits.pids?.exceeded, false);
  });

  it("makes every exec's processes the kernel's first choice in an OOM, never the container's keep-alive", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const box = boxes[0];
    assert.ok(box, "the first test's sandbox");
    const r = await box.exec(
      'cat /proc/self/oom_score_adj; sh -c "cat /proc/\\$\\$/oom_score_adj"; cat /proc/1/oom_score_adj; for d in /proc/[0-9]*; do [ "$(cat $d/comm)" = sleep ] && cat $d/oom_score_adj; done',
      { user: "agent" },
    );
    assert.equal(r.stdout, "1000\n1000\n0\n0\n", r.stderr);
  });

  it("keeps memory that outlives the agent (/dev/shm, SysV segments) under a quarter of memory_mb, so the container lives on", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const task = await limitTask(
      "limits-shm",
      // Every process started here would be killed at once if the agent's leftovers filled the limit.
      'n=$(for i in $(seq 1 10); do sh -c "echo $i"; done | wc -l); [ "$n" = 10 ] && echo 1 > /logs/verifier/reward.txt\n',
      (c) => {
        c.sandbox.memoryMb = 48;
      },
    );
    const box = await start(new ContainerBackend(), task, "shm__1");
    // Uncapped, /dev/shm (the engines' 64 MiB tmpfs) would take all 48 MiB and keep them after the writer died.
    const r = await box.exec(
      "head -c 60M /dev/zero > /dev/shm/fill; du -m /dev/shm/fill | cut -f1; cat /proc/sys/kernel/shm_rmid_forced",
      {
        user: "agent",
        timeoutSec: 60,
      },
    );
    assert.match(r.stderr, /No space left on device/);
    assert.equal(r.stdout, "12\n1\n");
    assert.equal(await running(engine, box), true);
    const outcome = await verify(box, task);
    assert.equal(outcome.rewards?.reward, 1, JSON.stringify(outcome));
    assert.equal(box.limits.memory_mb?.exceeded, false);
  });

  it("stops a disk fill past storage_mb (enforced, or watched and killed soon after), and the verifier writes past it", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const limitMb = 100;
    const task = await limitTask(
      "limits-disk",
      // The verifier's own 150 MiB, past the agent's limit: the watch has stopped.
      "head -c 150M /dev/zero > /tmp/verifier.bin && echo 1 > /logs/verifier/reward.txt\n",
      (c) => {
        c.sandbox.storageMb = limitMb;
      },
    );
    const box = await start(new ContainerBackend(), task, "disk__1");
    // At most 1 GiB in 8 MiB files, about 80 MiB/s (so one poll's overshoot is bounded), within 120 s.
    const r = await box.exec(
      "timeout 120 bash -c 'for i in $(seq 1 128); do head -c 8M /dev/zero > /app/fill.$i || exit 3; sleep 0.1; done'",
      { user: "agent", timeoutSec: 180 },
    );
    const written = await box.exec("du -sm /app | cut -f1", { user: "root" });
    const mb = Number(written.stdout.trim());
    if (box.limits.storage_mb?.applied === "engine") {
      assert.equal(r.exitCode, 3, "the engine refused the write past the limit");
      assert.ok(mb <= limitMb, `${mb} MiB written`);
    } else {
      assert.equal(box.limits.storage_mb?.applied, "watched");
      assert.equal(r.exitCode, 137, `the agent was killed, not finished: ${JSON.stringify(r)}`);
      assert.ok(mb > limitMb && mb < 600, `${mb} MiB written with a limit of ${limitMb} MiB`);
      const stats = box.storageWatchStats();
      assert.ok(stats && stats.polls >= 1);
    }
    const outcome = await verify(box, task);
    assert.equal(outcome.rewards?.reward, 1, JSON.stringify(outcome));
    assert.equal(box.limits.storage_mb?.exceeded, true);
  });

  it("reads OOM kills and refused forks from cgroup v1 and v2 counter files", () => {
    const v1 =
      "== /sys/fs/cgroup/memory/memory.oom_control\noom_kill_disable 0\nunder_oom 0\noom_kill 2\n== /sys/fs/cgroup/pids/pids.events\nmax 17\n";
    assert.deepEqual(parseCounters(v1), { oomKills: 2, pidsRefused: 17, pids: null });
    const v2 =
      "== /sys/fs/cgroup/memory.events\nlow 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n== /sys/fs/cgroup/pids.events\nmax 0\n== /sys/fs/cgroup/pids.current\n7\n";
    assert.deepEqual(parseCounters(v2), { oomKills: 1, pidsRefused: 0, pids: 7 });
    assert.deepEqual(parseCounters(""), { oomKills: null, pidsRefused: null, pids: null });
  });
});
