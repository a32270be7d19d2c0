// The agent's user as the task names it, and the folders the agent must never see: a root agent is
// uid 0 in a user namespace of its own (the verifier's files and the system stay out of its reach),
// another name is the sandbox's agent user with a warning, and a jobs folder lying inside a system
// folder the sandbox shows (/usr/local/...) is covered, with every sibling rollout in it.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { createNamespaceBackend } from "./backend.js";
import { makeSpec, makeTask, tempDir } from "./testing/kit.js";

const hostRoot = process.getuid?.() === 0;
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function taskFolder() {
  const t = await tempDir("ns-users-task");
  cleanups.push(t.cleanup);
  await fs.mkdir(path.join(t.dir, "tests"));
  await fs.writeFile(path.join(t.dir, "tests", "test.sh"), "echo 1 > /logs/verifier/reward.txt\n");
  return t.dir;
}

describe("the agent's user in the namespace sandbox", { skip: !hostRoot && "needs host root" }, () => {
  for (const tool of ["bwrap", "unshare"] as const) {
    const backend = createNamespaceBackend({ tool });

    it(`${tool}: [agent] user = "root" is uid 0 that cannot touch the verifier's files or the system`, async () => {
      const task = makeTask({ dir: await taskFolder() });
      task.config.agent.user = "root";
      const sandbox = await backend.create(makeSpec(task));
      cleanups.push(() => sandbox.stop());
      assert.equal(sandbox.agentIsNonRoot, false);
      await sandbox.upload(task.verifierDir, "/tests");
      const seeded = await sandbox.exec("echo 0 > /logs/verifier/reward.txt", { user: "root" });
      assert.equal(seeded.exitCode, 0, seeded.stderr);
      const probe = [
        "id -u",
        "echo x >> /tests/test.sh 2>/dev/null && echo tests-writable",
        "rm -f /tests/test.sh 2>/dev/null; test -e /tests/test.sh || echo tests-removed",
        "echo 1 > /logs/verifier/reward.txt 2>/dev/null && echo reward-writable",
        "touch /logs/verifier/new 2>/dev/null && echo verifier-dir-writable",
        "touch /usr/x 2>/dev/null && echo usr-writable",
        "touch /app/a /logs/agent/a /logs/artifacts/a $HOME/a /tmp/a && echo own-areas",
      ].join("; ");
      const r = await sandbox.exec(probe);
      assert.equal(r.stdout, "0\nown-areas\n", r.stderr);
      const reward = await sandbox.exec("cat /logs/verifier/reward.txt; cat /tests/test.sh", {
        user: "root",
      });
      assert.equal(reward.stdout, "0\necho 1 > /logs/verifier/reward.txt\n");
      await sandbox.stop();
    });

    it(`${tool}: another named user is the sandbox's agent user, with a warning that names it`, async () => {
      const task = makeTask({ dir: await taskFolder() });
      task.config.agent.user = "alice";
      const sandbox = await backend.create(makeSpec(task));
      cleanups.push(() => sandbox.stop());
      assert.equal(sandbox.agentIsNonRoot, true);
      assert.ok(
        sandbox.warnings.some((w) => w.includes('"alice"')),
        sandbox.warnings.join("\n"),
      );
      assert.equal((await sandbox.exec("id -u")).stdout, "1000\n");
      await sandbox.stop();
    });
  }

  it("hides a jobs folder under /usr/local: the job, its builds and every sibling rollout", async () => {
    const jobs = `/usr/local/bf-jobs-${randomBytes(6).toString("hex")}`;
    cleanups.push(() => fs.rm(jobs, { recursive: true, force: true }));
    const job = path.join(jobs, "job-a");
    for (const dir of [
      path.join(job, "builds"),
      path.join(job, "rollout-1"),
      path.join(jobs, "job-b", "rollout-1"),
    ])
      await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(jobs, "job-b", "rollout-1", "result.json"), '{"reward": 1}');
    await fs.writeFile(path.join(job, "rollout-1", "result.json"), '{"reward": 1}');
    await fs.writeFile(path.join(job, "builds", "log.txt"), "build log");
    await fs.chmod(jobs, 0o755);
    const task = makeTask({ dir: await taskFolder() });
    const sandbox = await createNamespaceBackend().create(makeSpec(task, { jobDir: job }));
    cleanups.push(() => sandbox.stop());
    const r = await sandbox.exec(
      `cat ${jobs}/job-b/rollout-1/result.json ${job}/rollout-1/result.json ${job}/builds/log.txt 2>/dev/null; ls -A ${jobs}; test -x /usr/local/bin || echo no-usr-local`,
    );
    assert.equal(r.stdout, "");
    await sandbox.stop();

    // A job folder directly in /usr/local: /usr/local itself stays, the job folder alone is covered.
    const single = `/usr/local/bf-job-${randomBytes(6).toString("hex")}`;
    cleanups.push(() => fs.rm(single, { recursive: true, force: true }));
    await fs.mkdir(path.join(single, "rollout-1"), { recursive: true });
    await fs.writeFile(path.join(single, "rollout-1", "result.json"), "{}");
    const second = await createNamespaceBackend().create(makeSpec(task, { jobDir: single }));
    cleanups.push(() => second.stop());
    const s = await second.exec(`ls -A ${single}; test -d /usr/local/bin && echo usr-local-shown`);
    assert.equal(s.stdout, "usr-local-shown\n");
    await second.stop();
  });

  it("hides an earlier run's jobs folder under /usr/local from a later run with a jobs folder of its own", async () => {
    const state = await tempDir("ns-seen-jobs");
    cleanups.push(state.cleanup);
    const before = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = state.dir;
    cleanups.push(async () => {
      if (before === undefined) delete process.env.XDG_STATE_HOME;
      else process.env.XDG_STATE_HOME = before;
    });
    const root = `/usr/local/bf-runs-${randomBytes(6).toString("hex")}`;
    cleanups.push(() => fs.rm(root, { recursive: true, force: true }));
    const earlier = path.join(root, "earlier-jobs", "job", "rollout-1");
    await fs.mkdir(earlier, { recursive: true });
    await fs.writeFile(path.join(earlier, "result.json"), '{"answer": 42}');
    await fs.mkdir(path.join(root, "later-jobs", "job"), { recursive: true });
    await fs.chmod(root, 0o755);
    const task = makeTask({ dir: await taskFolder() });
    const read = `cat ${earlier}/result.json 2>/dev/null || echo hidden`;
    // The earlier run's sandbox remembers its jobs folder; the later run's, elsewhere, hides it too.
    const first = await createNamespaceBackend().create(makeSpec(task, { jobDir: path.dirname(earlier) }));
    cleanups.push(() => first.stop());
    await first.stop();
    const later = await createNamespaceBackend().create(
      makeSpec(task, { jobDir: path.join(root, "later-jobs", "job") }),
    );
    cleanups.push(() => later.stop());
    assert.equal((await later.exec(read)).stdout, "hidden\n");
    await later.stop();
    // Without the memory (a fresh state folder), the earlier run's files would show: the test is real.
    process.env.XDG_STATE_HOME = path.join(state.dir, "empty");
    const forgetful = await createNamespaceBackend().create(
      makeSpec(task, { jobDir: path.join(root, "later-jobs", "job") }),
    );
    cleanups.push(() => forgetful.stop());
    assert.equal((await forgetful.exec(read)).stdout, '{"answer": 42}');
    await forgetful.stop();
  });
});
