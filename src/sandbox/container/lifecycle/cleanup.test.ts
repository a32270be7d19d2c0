// No container of ours outlives its run: a run's containers go on request, and the containers of
// a dead owner go when the next run reaps orphans; a live owner's containers stay.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import os from "node:os";
import { after, before, describe, it, type TestContext } from "node:test";
import type { Task } from "../../../task/types.js";
import { ContainerBackend } from "../backend.js";
import type { Engine } from "../engine/engine.js";
import { buildTaskImage } from "../image/image.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import {
  LABEL,
  listContainers,
  listNetworks,
  processStartTime,
  reapOrphans,
  removeContainer,
  removeContainersOfRun,
  removeNetwork,
} from "./cleanup.js";

let task: Task;
let engine: Engine | null = null;
const made: string[] = [];

async function ready(t: TestContext): Promise<Engine | null> {
  engine ??= await engineOrSkip(t);
  return engine;
}

before(async () => {
  task = await makeTask({ name: "container-cleanup", dockerfile: "FROM debian:bookworm-slim\n" });
});

after(async () => {
  if (engine) for (const id of made) await removeContainer(engine, id);
  await removeTaskDir(task);
});

/** A container labelled as if another process owned it. */
async function containerOwnedBy(e: Engine, owner: string, ownerStart: string, tag: string): Promise<string> {
  const { image } = await buildTaskImage(task, { engine: e });
  const labels = { [LABEL.owner]: owner, [LABEL.ownerStart]: ownerStart, [LABEL.job]: tag, [LABEL.run]: tag };
  const body = {
    Image: image,
    Entrypoint: ["sleep"],
    Cmd: ["infinity"],
    Labels: labels,
    HostConfig: { NetworkMode: "none" },
  };
  const { Id } = await e.client.json<{ Id: string }>("POST", "/containers/create", { json: body });
  made.push(Id);
  return Id;
}

describe("container cleanup", () => {
  it("removes every container of a run, and only that run's", async (t) => {
    const e = await ready(t);
    if (!e) return;
    const runId = `cleanup-run-${process.pid}-${Date.now()}`;
    const ours = new ContainerBackend({ runId });
    const a = await ours.create({ task, jobName: "cleanup", rolloutName: "run__1", network: false });
    const b = await ours.create({ task, jobName: "cleanup", rolloutName: "run__2", network: false });
    const other = await new ContainerBackend().create({
      task,
      jobName: "cleanup",
      rolloutName: "other__1",
      network: false,
    });
    try {
      const removed = await removeContainersOfRun(runId, e);
      assert.deepEqual(removed.sort(), [a.id, b.id].sort());
      assert.deepEqual(await listContainers(e, `${LABEL.run}=${runId}`), []);
      const still = await listContainers(e, `${LABEL.rollout}=other__1`);
      assert.deepEqual(
        still.map((c) => c.Id),
        [other.id],
      );
    } finally {
      await Promise.all([a.stop(), b.stop(), other.stop()]);
    }
  });

  it("reaps the containers of a dead owner on this host and keeps a live owner's", async (t) => {
    const e = await ready(t);
    if (!e) return;
    const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
    const deadPid = Number(child.stdout.trim());
    assert.equal(processStartTime(deadPid), null, "the child must be gone");
    const tag = `reap-${process.pid}-${Date.now()}`;
    const dead = await containerOwnedBy(e, `${deadPid}@${os.hostname()}`, "12345", `${tag}-dead`);
    const live = await containerOwnedBy(
      e,
      `${process.pid}@${os.hostname()}`,
      processStartTime(process.pid) ?? "",
      `${tag}-live`,
    );
    // A live pid whose start time differs is a reused pid: its container is an orphan too.
    const reused = await containerOwnedBy(e, `${process.pid}@${os.hostname()}`, "1", `${tag}-reused`);
    const elsewhere = await containerOwnedBy(e, "1@some-other-host", "1", `${tag}-elsewhere`);
    const removed = await reapOrphans(e);
    assert.ok(removed.includes(dead));
    assert.ok(removed.includes(reused));
    assert.ok(!removed.includes(live));
    assert.ok(!removed.includes(elsewhere));
    assert.deepEqual(await listContainers(e, `${LABEL.job}=${tag}-dead`), []);
    assert.equal((await listContainers(e, `${LABEL.job}=${tag}-live`)).length, 1);
    assert.equal((await listContainers(e, `${LABEL.job}=${tag}-elsewhere`)).length, 1);
  });

  it("reaps a dead owner's networks (compose rollouts make one each) and keeps a live owner's", async (t) => {
    const e = await ready(t);
    if (!e) return;
    const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
    const deadPid = Number(child.stdout.trim());
    const tag = `reap-net-${process.pid}-${Date.now()}`;
    const network = async (owner: string, ownerStart: string, suffix: string) => {
      const labels = {
        [LABEL.owner]: owner,
        [LABEL.ownerStart]: ownerStart,
        [LABEL.job]: `${tag}-${suffix}`,
      };
      return (
        await e.client.json<{ Id: string }>("POST", "/networks/create", {
          json: { Name: `${tag}-${suffix}`, Labels: labels },
        })
      ).Id;
    };
    const dead = await network(`${deadPid}@${os.hostname()}`, "12345", "dead");
    const live = await network(
      `${process.pid}@${os.hostname()}`,
      processStartTime(process.pid) ?? "",
      "live",
    );
    try {
      const removed = await reapOrphans(e);
      assert.ok(removed.includes(dead));
      assert.ok(!removed.includes(live));
      assert.deepEqual(await listNetworks(e, `${LABEL.job}=${tag}-dead`), []);
      assert.equal((await listNetworks(e, `${LABEL.job}=${tag}-live`)).length, 1);
    } finally {
      await removeNetwork(e, dead);
      await removeNetwork(e, live);
    }
  });
});
