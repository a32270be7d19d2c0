// The agent's user across images: an image that already has `agent` keeps it, an image whose
// Dockerfile ends with a non-root USER still gets a root setup, and agentUser "root" runs the agent
// as root (and says so).
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Task } from "../../../task/types.js";
import { ContainerBackend } from "../backend.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";

const tasks: Task[] = [];

after(async () => {
  for (const t of tasks) await removeTaskDir(t);
});

describe("the agent's user in a container", () => {
  it("keeps an agent user the image already has, even under a non-root USER", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await makeTask({
      name: "container-own-user",
      dockerfile:
        "FROM debian:bookworm-slim\nRUN useradd -m -u 1234 -d /home/own agent\nUSER agent\nWORKDIR /srv/ws\n",
      workdir: "/srv/ws",
    });
    tasks.push(task);
    const sandbox = await new ContainerBackend().create({
      task,
      jobName: "users",
      rolloutName: "own__1",
      network: false,
    });
    try {
      const agent = await sandbox.exec("id -u; echo $HOME; touch /srv/ws/f && echo ws-writable", {
        user: "agent",
      });
      assert.equal(agent.stdout, "1234\n/home/own\nws-writable\n");
      const root = await sandbox.exec("id -u", { user: "root" });
      assert.equal(root.stdout, "0\n");
    } finally {
      await sandbox.stop();
    }
  });

  it("runs the agent as root when asked, and reports it", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await makeTask({ name: "container-root-agent", dockerfile: "FROM debian:bookworm-slim\n" });
    tasks.push(task);
    const backend = new ContainerBackend({ agentUser: "root" });
    const sandbox = await backend.create({ task, jobName: "users", rolloutName: "root__1", network: false });
    try {
      assert.equal(sandbox.agentIsNonRoot, false);
      assert.equal(sandbox.workdir, "/app");
      const r = await sandbox.exec("id -un; pwd", { user: "agent" });
      assert.equal(r.stdout, "root\n/app\n");
      // killAgentProcesses still finds a root agent's leftovers (by their marker), and only those.
      await sandbox.exec("nohup sleep 501 >/dev/null 2>&1 &", { user: "agent" });
      await sandbox.exec("nohup sleep 502 >/dev/null 2>&1 &", { user: "root" });
      await sandbox.killAgentProcesses();
      const left = await sandbox.exec("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '", {
        user: "root",
      });
      assert.doesNotMatch(left.stdout, /sleep 501/);
      assert.match(left.stdout, /sleep 502/);
    } finally {
      await sandbox.stop();
    }
  });
});
