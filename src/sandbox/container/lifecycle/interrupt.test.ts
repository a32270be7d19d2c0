// A run stopped by a signal removes its containers before it exits; a run killed outright leaves
// them, and the next run's reapOrphans removes them because their owner is gone.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Task } from "../../../task/types.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import { LABEL, listContainers, reapOrphans } from "./cleanup.js";

const CHILD = fileURLToPath(new URL("./fixtures/child-run.ts", import.meta.url));
let task: Task;

before(async () => {
  task = await makeTask({ name: "container-interrupt", dockerfile: "FROM debian:bookworm-slim\n" });
});

after(async () => {
  await removeTaskDir(task);
});

/** Starts a child run and resolves once its container exists. */
async function childRun(runId: string, mode: "cleanup" | "crash") {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, runId, mode, JSON.stringify(task)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  for await (const chunk of child.stdout) {
    out += String(chunk);
    if (out.includes("\n")) break;
  }
  const id = /^ready (\w+)/.exec(out)?.[1];
  assert.ok(id, `the child run did not start: ${out}`);
  return { child, id };
}

describe("containers of an interrupted or crashed run", () => {
  it("are removed when the run gets SIGTERM, and the run exits 143", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const runId = `interrupt-${process.pid}-${Date.now()}`;
    const { child } = await childRun(runId, "cleanup");
    assert.equal((await listContainers(engine, `${LABEL.run}=${runId}`)).length, 1);
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    assert.equal(code, 143);
    assert.deepEqual(await listContainers(engine, `${LABEL.run}=${runId}`), []);
  });

  it("are reaped by the next run after the owner was killed", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const runId = `crash-${process.pid}-${Date.now()}`;
    const { child, id } = await childRun(runId, "crash");
    child.kill("SIGKILL");
    await once(child, "exit");
    const left = await listContainers(engine, `${LABEL.run}=${runId}`);
    assert.deepEqual(
      left.map((c) => c.Id),
      [id],
    );
    const reaped = await reapOrphans(engine);
    assert.ok(reaped.includes(id));
    assert.deepEqual(await listContainers(engine, `${LABEL.run}=${runId}`), []);
  });
});
