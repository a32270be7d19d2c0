// The container's disk limit counts files as well as bytes: a flood of empty files (no blocks, an
// inode each on the host's filesystem) is stopped soon after it passes one file per 16 KiB of
// storage_mb, and the verifier still runs and scores afterwards.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { Task } from "../../../task/types.js";
import { runVerifier } from "../../../verifier/run.js";
import { ContainerBackend } from "../backend.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import type { ContainerSandbox } from "./sandbox.js";
import { BYTES_PER_INODE } from "./storage-watch.js";

const cleanup: (() => Promise<unknown>)[] = [];
after(() => Promise.all(cleanup.map((f) => f())));

describe("container disk limit, files", () => {
  it("stops a flood of empty files past storage_mb's share of inodes; the verifier scores after it", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const limitMb = 64;
    const task: Task = await makeTask({
      name: "limits-files",
      dockerfile: "FROM debian:bookworm-slim\nWORKDIR /app\n",
      workdir: "/app",
      tests: { "test.sh": "touch /tmp/verifier-file && echo 1 > /logs/verifier/reward.txt\n" },
      configure: (c) => {
        c.sandbox.storageMb = limitMb;
      },
    });
    cleanup.push(() => removeTaskDir(task));
    const box: ContainerSandbox = await new ContainerBackend().create({
      task,
      jobName: `cfiles-${process.pid}`,
      rolloutName: "files__1",
      network: false,
    });
    cleanup.push(() => box.stop());
    if (box.limits.storage_mb?.applied !== "watched")
      return void t.skip(`the engine enforces the disk limit itself (${box.limits.storage_mb?.applied})`);
    // 300k empty files, in batches of a thousand (no byte written: only the file count can stop it).
    const r = await box.exec(
      'mkdir -p /app/flood && cd /app/flood && for i in $(seq 1 300); do seq -f "$i-%g" 1 1000 | xargs touch || exit 3; done',
      { user: "agent", timeoutSec: 300 },
    );
    const count = Number((await box.exec("ls -f /app/flood | wc -l", { user: "root" })).stdout.trim());
    const allowed = (limitMb * 1024 * 1024) / BYTES_PER_INODE;
    assert.equal(
      r.exitCode,
      137,
      `the agent was killed, not finished (${count} files): ${JSON.stringify(r)}`,
    );
    assert.ok(count > allowed && count < 300_000, `${count} files with ${allowed} allowed`);
    t.diagnostic(
      `${count} files landed (allowed ${allowed}) after ${box.storageWatchStats()?.polls} measurements`,
    );
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-cfiles-"));
    cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
    const outcome = await runVerifier(box, task, dir);
    assert.equal(outcome.rewards?.reward, 1, JSON.stringify(outcome));
    assert.equal(box.limits.storage_mb?.exceeded, true);
  });
});
