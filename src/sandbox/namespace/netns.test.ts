// The sandbox's own network: its two host processes (the namespace holder and slirp4netns) go
// with stop(), and with the run itself when it is killed outright (SIGKILL leaves no cleanup).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { createNamespaceBackend } from "./backend.js";
import { makeSpec, makeTask, tempDir } from "./testing/kit.js";

/** Host pids whose parent is `parent`, with their command names. */
async function childrenOf(parent: number): Promise<{ pid: number; comm: string }[]> {
  const out: { pid: number; comm: string }[] = [];
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[1]) === parent && fields[0] !== "Z") {
      out.push({ pid: Number(name), comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) });
    }
  }
  return out;
}

/**
 * The holder and slirp4netns among `parent`'s children. The holder says it is ready before it
 * execs sleep, so its name is read until it is sleep (bounded only against a hang, generously).
 */
async function networkProcesses(parent: number): Promise<{ pid: number; comm: string }[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const theirs = await childrenOf(parent);
    const mine = theirs.filter((c) => ["sleep", "slirp4netns"].includes(c.comm));
    if (mine.length === 2 || Date.now() > deadline) return mine.length === 2 ? mine : theirs;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function gone(pids: number[]): Promise<boolean> {
  // Bounded only against a hang: the kernel ends them as soon as their parent dies.
  for (let i = 0; i < 500; i++) {
    const alive = await Promise.all(
      pids.map((p) =>
        fs.readFile(`/proc/${p}/stat`, "utf8").then(
          (s) => !/\) Z /.test(s),
          () => false,
        ),
      ),
    );
    if (!alive.some(Boolean)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe("namespace sandbox network: its processes", () => {
  it("stop() ends the holder and slirp4netns", async () => {
    const task = await tempDir("ns-net");
    try {
      const sandbox = await createNamespaceBackend().create(
        makeSpec(makeTask({ dir: task.dir }), { network: true }),
      );
      const mine = await networkProcesses(process.pid);
      assert.deepEqual(mine.map((c) => c.comm).sort(), ["sleep", "slirp4netns"]);
      await sandbox.stop();
      assert.ok(await gone(mine.map((c) => c.pid)));
    } finally {
      await task.cleanup();
    }
  });

  it("a run killed with SIGKILL leaves neither behind", async (t) => {
    const task = await tempDir("ns-net-child");
    t.after(task.cleanup);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(import.meta.dirname, "fixtures/network-child.ts"), task.dir],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once("data", () => resolve());
      child.once("exit", (code) =>
        reject(new Error(`the child exited (${code}) before its sandbox was ready`)),
      );
    });
    const theirs = await networkProcesses(child.pid as number);
    const pids = theirs.filter((c) => ["sleep", "slirp4netns"].includes(c.comm)).map((c) => c.pid);
    assert.equal(pids.length, 2, JSON.stringify(theirs));
    child.kill("SIGKILL");
    assert.ok(await gone(pids), "the holder or slirp4netns outlived the run");
  });
});
