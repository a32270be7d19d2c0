// Copies out of the container sandbox are bounded: a trial's hostile logs (the engines send a
// sparse file's zeros, the archive its links as they are), and a download past a small budget.
// Runs on Podman here and on Docker in CI (scripts/container-tests.sh).
import path from "node:path";
import { describe, it } from "node:test";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../src/sandbox/container/testing/kit.js";
import { useScratch } from "./testing/bench.js";
import { downloadPastBudget, hostileLogsRollout } from "./testing/copy-out.js";

const scratch = useScratch("copy-out-ct");

describe("copies out of the container sandbox", () => {
  it("a trial's sparse files stay sparse, links to host files and fifos stay behind, recorded", async (t) => {
    if (!(await engineOrSkip(t))) return;
    await hostileLogsRollout("container", path.join(scratch(), "jobs"));
  });

  it("a download stops at its budget and records the cut", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await makeTask({ name: "copy-out-budget", dockerfile: "FROM debian:bookworm-slim\n" });
    const sandbox = await new ContainerBackend().create({
      task,
      jobName: `copy-out-${process.pid}`,
      rolloutName: "copy-out-budget__1",
      network: false,
    });
    try {
      await downloadPastBudget(sandbox, path.join(scratch(), "budget"));
    } finally {
      await sandbox.stop();
      await removeTaskDir(task);
    }
  });
});
