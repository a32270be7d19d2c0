// The task's limits in the namespace sandbox, with real sandboxes and a real verifier: a disk that
// fills stops near storage_mb, a fork bomb stays within the pids cgroup, an allocation loop is
// OOM-killed within memory_mb, and each time the verifier still writes its reward. Afterwards no
// cgroup or loop device is left, also when the run that made them was killed with SIGKILL.
// Each filling/forking/allocating command runs under `timeout` and an exec timeout of its own.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { runVerifier } from "../../verifier/run.js";
import type { SandboxLimits } from "../types.js";
import { createNamespaceBackend } from "./backend.js";
import { loopDeviceOf } from "./disk.js";
import type { NamespaceSandbox } from "./sandbox.js";
import { makeSpec, makeTask, tempDir } from "./testing/kit.js";

const hostRoot = process.getuid?.() === 0;
const LIMITED = { timeout: 180_000 };

interface Recorded {
  cgroups: string[];
  mountpoint: string | null;
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

/** A task folder whose verifier writes its reward and then 8 MB more (it needs room of its own). */
async function verifiedTask(limits: { memoryMb?: number; storageMb?: number }) {
  const t = await tempDir("ns-limits-task");
  cleanups.push(t.cleanup);
  await fs.mkdir(path.join(t.dir, "tests"));
  await fs.writeFile(
    path.join(t.dir, "tests", "test.sh"),
    "set -e\necho 1 > /logs/verifier/reward.txt\ndd if=/dev/zero of=/tmp/verifier-pad bs=1M count=8 2>/dev/null\necho verified\n",
  );
  const task = makeTask({ dir: t.dir });
  Object.assign(task.config.sandbox, limits);
  const rollout = await tempDir("ns-limits-rollout");
  cleanups.push(rollout.cleanup);
  return { task, rolloutDir: rollout.dir };
}

/** Read again: prepareVerifier settles `exceeded` after the asserts above narrowed the type. */
const limitsOf = (sandbox: NamespaceSandbox): SandboxLimits => sandbox.limits;

async function recorded(sandbox: NamespaceSandbox): Promise<Recorded> {
  return JSON.parse(await fs.readFile(path.join(sandbox.id, "meta", "resources.json"), "utf8"));
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

/** No cgroup folder, mount or loop device of this sandbox is left on the host. */
async function assertReleased(dir: string, record: Recorded): Promise<void> {
  for (const cg of record.cgroups) assert.equal(await exists(cg), false, `${cg} is left`);
  assert.equal(await loopDeviceOf(path.join(dir, "fs")), null, "the disk is still mounted");
  const image = path.join(dir, "disk.img");
  for (const dev of await fs.readdir("/sys/block")) {
    const backing = await fs.readFile(`/sys/block/${dev}/loop/backing_file`, "utf8").catch(() => "");
    assert.ok(!backing.startsWith(image), `${dev} still backs ${image}`);
  }
  assert.equal(await exists(dir), false);
}

describe("namespace sandbox limits", { skip: !hostRoot && "cgroups and loop disks need host root" }, () => {
  for (const tool of ["bwrap", "unshare"] as const) {
    const backend = createNamespaceBackend({ tool, pidsLimit: 64 });

    it(
      `${tool}: the disk stops the agent near storage_mb and the verifier still scores`,
      LIMITED,
      async () => {
        const { task, rolloutDir } = await verifiedTask({ storageMb: 64 });
        const sandbox = await backend.create(makeSpec(task));
        cleanups.push(() => sandbox.stop());
        assert.deepEqual(sandbox.limits.storage_mb, { requested: 64, applied: "filesystem" });
        const fill = await sandbox.exec(
          "timeout 60 dd if=/dev/zero of=/app/fill bs=1M 2>&1 | grep -o 'No space left on device'; stat -c %s /app/fill",
          { timeoutSec: 90 },
        );
        assert.match(fill.stdout, /No space left on device/);
        const filled = Number(fill.stdout.trim().split("\n").at(-1)) / 1024 / 1024;
        assert.ok(filled > 64 * 0.9 && filled <= 64, `the agent wrote ${filled} MB`);
        // The host pays at most the image: its blocks on the host disk stay near what was written.
        const image = await fs.stat(path.join(sandbox.id, "disk.img"));
        assert.ok((image.blocks * 512) / 1024 / 1024 < 64 + 70, "the image grew past the sandbox's disk");
        const outcome = await runVerifier(sandbox, task, rolloutDir);
        assert.equal(outcome.error, null, outcome.error?.message);
        assert.deepEqual(outcome.rewards, { reward: 1 });
        assert.equal(limitsOf(sandbox).storage_mb?.exceeded, true);
        const record = await recorded(sandbox);
        await sandbox.stop();
        await assertReleased(sandbox.id, record);
      },
    );

    it(
      `${tool}: a fork bomb stays within the pids limit and the verifier still scores`,
      LIMITED,
      async () => {
        const { task, rolloutDir } = await verifiedTask({});
        const sandbox = await backend.create(makeSpec(task));
        cleanups.push(() => sandbox.stop());
        assert.deepEqual(sandbox.limits.pids, { requested: 64, applied: "cgroup" });
        // The bomb's shells hold no pipe of ours: its log goes to a file. Its root returns at once
        // while its children go on forking, so the log is read until a refused fork shows there,
        // with builtins only (no fork of ours is needed once the pids are spent), bounded at 60 s.
        const bomb = await sandbox.exec(
          [
            "bash -c 'b() { b | b & }; b' >/tmp/bomb.log 2>&1",
            "end=$((SECONDS + 60)); found=0",
            "while ((found == 0 && SECONDS < end)); do",
            '  while IFS= read -r line; do [[ $line == *"Resource temporarily unavailable"* ]] && found=1 && break; done </tmp/bomb.log',
            "done",
            "echo $found",
          ].join("\n"),
          { timeoutSec: 90 },
        );
        assert.equal(bomb.timedOut, false);
        assert.equal(bomb.stdout, "1\n", bomb.stderr);
        const outcome = await runVerifier(sandbox, task, rolloutDir);
        assert.equal(outcome.error, null, outcome.error?.message);
        assert.deepEqual(outcome.rewards, { reward: 1 });
        assert.equal(limitsOf(sandbox).pids?.exceeded, true);
        assert.equal(limitsOf(sandbox).memory_mb?.exceeded, false);
        const record = await recorded(sandbox);
        // The verifier ran in cgroups of its own (pids, memory); the agent's were removed before it.
        const [verifiers, agents] = [true, false].map((v) =>
          record.cgroups.filter((c) => c.endsWith("-verifier") === v),
        );
        assert.equal(verifiers?.length, 2);
        for (const cg of agents ?? []) assert.equal(await exists(cg), false);
        // A next step's agent and verifier (multi-step tasks): a fresh cgroup again, and what was
        // exceeded stays exceeded.
        assert.equal((await sandbox.exec("echo again")).stdout, "again\n");
        const second = await runVerifier(sandbox, task, rolloutDir);
        assert.deepEqual(second.rewards, { reward: 1 });
        assert.equal(limitsOf(sandbox).pids?.exceeded, true);
        const later = await recorded(sandbox);
        assert.ok(
          later.cgroups.every((c) => c.endsWith("-verifier-2")),
          later.cgroups.join(" "),
        );
        for (const cg of record.cgroups) assert.equal(await exists(cg), false);
        await sandbox.stop();
        await assertReleased(sandbox.id, later);
      },
    );

    it(
      `${tool}: an allocating process is OOM-killed within memory_mb and the verifier still scores`,
      LIMITED,
      async () => {
        const { task, rolloutDir } = await verifiedTask({ memoryMb: 64 });
        const sandbox = await backend.create(makeSpec(task));
        cleanups.push(() => sandbox.stop());
        assert.deepEqual(sandbox.limits.memory_mb, { requested: 64, applied: "cgroup" });
        const alloc = await sandbox.exec(
          `timeout 60 python3 -c 'a = []\nwhile True: a.append(bytearray(1 << 20))'; echo "rc=$?"`,
          { timeoutSec: 90 },
        );
        assert.equal(alloc.stdout, "rc=137\n", alloc.stderr); // SIGKILL from the OOM killer, not the timeout (124)
        const outcome = await runVerifier(sandbox, task, rolloutDir);
        assert.equal(outcome.error, null, outcome.error?.message);
        assert.deepEqual(outcome.rewards, { reward: 1 });
        assert.equal(limitsOf(sandbox).memory_mb?.exceeded, true);
        await sandbox.stop();
      },
    );
  }

  it("a run killed with SIGKILL leaves its cgroup and disk to the next run's reaper", LIMITED, async () => {
    const scratch = await tempDir("ns-limits-orphans");
    cleanups.push(scratch.cleanup);
    const task = await tempDir("ns-limits-orphan-task");
    cleanups.push(task.cleanup);
    const fixture = path.join(import.meta.dirname, "fixtures", "limits-orphan.ts");
    const child = spawn(process.execPath, ["--import", "tsx", fixture, scratch.dir, task.dir], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (b: Buffer) => {
        out += b.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0] as string);
      });
      child.on("exit", (code) => reject(new Error(`fixture exited ${code} before reporting`)));
    });
    const [dir, stripped] = JSON.parse(line).ids as [string, string];
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const records: Recorded[] = [];
    for (const d of [dir, stripped]) {
      const record: Recorded = JSON.parse(await fs.readFile(path.join(d, "meta", "resources.json"), "utf8"));
      assert.notEqual(
        await loopDeviceOf(path.join(d, "fs")),
        null,
        "the dead run's disk should still be mounted",
      );
      for (const cg of record.cgroups) assert.equal(await exists(cg), true);
      records.push(record);
    }
    // The second lost its files but not its mount (a reaper that knew no disks): found all the same.
    await fs.rm(path.join(stripped, "meta"), { recursive: true });
    // The next sandbox in that scratch folder reaps first.
    const next = await createNamespaceBackend({ scratchDir: scratch.dir }).create(
      makeSpec(makeTask({ dir: task.dir })),
    );
    await next.stop();
    await assertReleased(dir, records[0] as Recorded);
    await assertReleased(stripped, records[1] as Recorded);
  });
});
