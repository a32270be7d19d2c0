// The core behaviour of the namespace sandbox, run against real bwrap and real unshare.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createNamespaceBackend } from "./backend.js";
import type { NamespaceSandbox } from "./sandbox.js";
import { hostPidsWith, makeSpec, makeTask, sleepMarker, tempDir, waitForHostProcess } from "./testing/kit.js";

const hostRoot = process.getuid?.() === 0;
/** One HTTP request to Debian's archive with bash alone: prints the status line. */
const DEBIAN_PROBE = `exec 3<>/dev/tcp/deb.debian.org/80 && printf 'HEAD /debian/dists/bookworm/Release HTTP/1.1\\r\\nHost: deb.debian.org\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n1 <&3`;

for (const tool of ["bwrap", "unshare"] as const) {
  describe(`namespace sandbox with ${tool}`, () => {
    const backend = createNamespaceBackend({ tool });
    const cleanups: (() => Promise<void>)[] = [];
    let taskDir: string;
    let jobsDir: string;
    let sandbox: NamespaceSandbox;

    const fresh = async (extra: { network?: boolean } = {}) => {
      const s = await backend.create(makeSpec(makeTask({ dir: taskDir }), extra));
      cleanups.push(() => s.stop());
      return s;
    };

    before(async () => {
      assert.equal(await backend.unavailableReason(), null);
      const task = await tempDir("ns-task");
      const jobs = await tempDir("ns-jobs");
      cleanups.push(task.cleanup, jobs.cleanup);
      taskDir = task.dir;
      jobsDir = jobs.dir;
      await fs.writeFile(path.join(taskDir, "secret.txt"), "oracle answer");
      await fs.writeFile(path.join(jobsDir, "result.json"), "{}");
      const spec = makeSpec(
        makeTask({
          dir: taskDir,
          dockerfile: { env: { GREETING: "from-dockerfile", LAYER: "dockerfile" }, workdir: "/work/proj" },
          env: { LAYER: "task" },
        }),
        { env: { FROM_SPEC: "spec" } },
      );
      sandbox = await backend.create(spec);
      cleanups.push(() => sandbox.stop());
    });

    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    it("runs bash -c and reports exit codes, stdout and stderr", async () => {
      const ok = await sandbox.exec("echo out; echo err >&2");
      assert.deepEqual(
        [ok.exitCode, ok.stdout, ok.stderr, ok.timedOut, ok.aborted],
        [0, "out\n", "err\n", false, false],
      );
      const failed = await sandbox.exec("exit 3");
      assert.equal(failed.exitCode, 3);
      const cwd = await sandbox.exec("pwd", { cwd: "/tmp" });
      assert.equal(cwd.stdout, "/tmp\n");
    });

    it("applies Dockerfile ENV, then task, spec and exec env, with WORKDIR as the default cwd", async () => {
      assert.equal(sandbox.workdir, "/work/proj");
      const r = await sandbox.exec('echo "$(pwd) $GREETING $LAYER $FROM_SPEC $ONE $HOME"', {
        env: { ONE: "exec" },
      });
      assert.equal(r.stdout, "/work/proj from-dockerfile task spec exec /home/agent\n");
      const root = await sandbox.exec('echo "$HOME $LAYER"', { user: "root", env: { LAYER: "exec" } });
      assert.equal(root.stdout, "/root exec\n");
      const env = await sandbox.exec("env");
      assert.doesNotMatch(env.stdout, /NODE_|npm_/, "host environment leaked into the sandbox");
    });

    it("runs the agent as a non-root user and the verifier as root", async () => {
      const agent = await sandbox.exec("id -u");
      const root = await sandbox.exec("id -u", { user: "root" });
      assert.notEqual(agent.stdout.trim(), "0");
      assert.equal(root.stdout.trim(), "0");
      assert.equal(sandbox.agentIsNonRoot, true);
    });

    it("keeps root-only files from the agent", { skip: !hostRoot && "only as host root" }, async () => {
      const made = await sandbox.exec("echo topsecret > /logs/verifier/key && chmod 600 /logs/verifier/key", {
        user: "root",
      });
      assert.equal(made.exitCode, 0, made.stderr);
      const read = await sandbox.exec("cat /logs/verifier/key");
      assert.notEqual(read.exitCode, 0);
      assert.doesNotMatch(read.stdout, /topsecret/);
      const shadow = await sandbox.exec("cat /etc/shadow");
      assert.notEqual(shadow.exitCode, 0, "the agent read the host's /etc/shadow");
    });

    it("lets the verifier read and remove what the agent made", async () => {
      const made = await sandbox.exec("umask 077; mkdir -p d/sub && echo x > d/sub/f && chmod 500 d");
      assert.equal(made.exitCode, 0, made.stderr);
      const r = await sandbox.exec("cat d/sub/f && rm -rf d && test ! -e d && echo gone", { user: "root" });
      assert.equal(r.stdout, "x\ngone\n", r.stderr);
    });

    it("hides the task folder, the jobs folder, host homes and its own scratch root", async () => {
      const marker = path.join(os.homedir(), `.benchflow-ns-${process.pid}`);
      await fs.writeFile(marker, "host home");
      try {
        for (const user of ["agent", "root"] as const) {
          const r = await sandbox.exec(
            `for p in "${taskDir}/secret.txt" "${jobsDir}" "${marker}" "${sandbox.id}"; do test -e "$p" && echo "VISIBLE $p"; done; ls /home`,
            { user },
          );
          assert.equal(r.stdout, "agent\n", `${user}: ${r.stdout}`);
        }
      } finally {
        await fs.rm(marker, { force: true });
      }
    });

    it("shows /usr and /etc read-only, even to root", async () => {
      const r = await sandbox.exec(
        "touch /usr/bin/ns-x; touch /etc/ns-x; mount -o remount,rw /usr; echo done",
        {
          user: "root",
        },
      );
      assert.equal(r.stdout, "done\n");
      assert.match(r.stderr, /Read-only file system[\s\S]*Read-only file system/);
      await assert.rejects(fs.access("/usr/bin/ns-x"));
      const bash = await sandbox.exec("/bin/bash -c 'echo $BASH_VERSION' && ls -d /lib /sbin");
      assert.equal(bash.exitCode, 0, bash.stderr);
    });

    it("kills the whole process tree on timeout", async () => {
      const bg = sleepMarker();
      // The limit must leave time for the child to start and be seen before the kill ends it.
      const run = sandbox.exec(`sleep ${bg} & sleep ${sleepMarker()}`, { timeoutSec: 5 });
      await waitForHostProcess(bg);
      const r = await run;
      assert.deepEqual([r.exitCode, r.timedOut, r.aborted], [null, true, false]);
      assert.deepEqual(await hostPidsWith(bg), [], "the background child survived the timeout");
    });

    it("kills the whole process tree on abort", async () => {
      const bg = sleepMarker();
      const controller = new AbortController();
      const run = sandbox.exec(`(sleep ${bg} &) ; sleep ${sleepMarker()}`, { signal: controller.signal });
      await waitForHostProcess(bg);
      controller.abort();
      const r = await run;
      assert.deepEqual([r.exitCode, r.timedOut, r.aborted], [null, false, true]);
      assert.deepEqual(await hostPidsWith(bg), [], "the orphaned child survived the abort");
    });

    it("leaves nothing running after a command that returns", async () => {
      const bg = sleepMarker();
      const r = await sandbox.exec(`nohup sleep ${bg} >/dev/null 2>&1 & echo started`);
      assert.equal(r.stdout, "started\n");
      assert.deepEqual(await hostPidsWith(bg), []);
    });

    it("killAgentProcesses ends agent commands still running, not the verifier's", async () => {
      const bg = sleepMarker();
      const agentRun = sandbox.exec(`sleep ${bg}`);
      const rootRun = sandbox.exec("sleep 1; echo root-done", { user: "root" });
      await waitForHostProcess(bg);
      await sandbox.killAgentProcesses();
      const agent = await agentRun;
      assert.deepEqual([agent.exitCode, agent.aborted], [null, true]);
      assert.deepEqual(await hostPidsWith(bg), []);
      assert.equal((await rootRun).stdout, "root-done\n");
    });

    it("keeps only the tail of long output", async () => {
      const r = await sandbox.exec("head -c 300000 /dev/zero | tr '\\0' a; echo END", {
        maxOutputBytes: 1000,
      });
      assert.equal(r.stdout.length, 1000);
      assert.ok(r.stdout.endsWith("aaaEND\n"));
    });

    it("has no network unless the spec allows it, and never the host's loopback", async () => {
      const server = net.createServer((socket) => socket.end("hello\n"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as net.AddressInfo).port;
      const probe = (host: string) => `exec 3<>/dev/tcp/${host}/${port} && head -n1 <&3`;
      try {
        // Judged by the server's answer: some hosts answer any outbound connect with a proxy.
        const closed = await sandbox.exec(probe("127.0.0.1"));
        assert.doesNotMatch(closed.stdout, /hello/, "reached the host's loopback without network");
        const outside = await sandbox.exec(DEBIAN_PROBE, { timeoutSec: 30 });
        assert.notEqual(outside.exitCode, 0, "reached the outside without network");
        const open = await fresh({ network: true });
        // 10.0.2.2 is slirp4netns's address of the host, which --disable-host-loopback cuts off.
        for (const host of ["127.0.0.1", "10.0.2.2"]) {
          const r = await open.exec(probe(host), { timeoutSec: 30 });
          assert.doesNotMatch(
            r.stdout,
            /hello/,
            `reached the host's loopback through ${host} with network on`,
          );
        }
        const r = await open.exec(DEBIAN_PROBE, { timeoutSec: 60 });
        assert.equal(r.exitCode, 0, r.stderr);
        assert.match(r.stdout, /^HTTP\/1\.1 200/);
        // The phase switch: the same sandbox, its next exec without network.
        await open.setNetwork(false);
        assert.notEqual((await open.exec(DEBIAN_PROBE, { timeoutSec: 30 })).exitCode, 0);
        await open.setNetwork(true);
        assert.equal((await open.exec(DEBIAN_PROBE, { timeoutSec: 60 })).exitCode, 0);
      } finally {
        server.close();
      }
    });

    it("keeps two sandboxes apart", async () => {
      const other = await fresh();
      await sandbox.exec("echo a > /work/proj/only-a; echo a > /tmp/only-a");
      const r = await other.exec("ls /app /tmp");
      assert.equal(r.exitCode, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /only-a/);
      assert.notEqual(other.id, sandbox.id);
    });

    it("stop() removes the scratch root, agent files included, and can be called twice", async () => {
      const doomed = await fresh();
      const made = await doomed.exec(
        "mkdir -p /app/ro/deep && echo x > /app/ro/deep/f && chmod 500 /app/ro /app/ro/deep",
      );
      assert.equal(made.exitCode, 0, made.stderr);
      await fs.access(doomed.id);
      await doomed.stop();
      await assert.rejects(fs.access(doomed.id));
      await doomed.stop();
      await assert.rejects(doomed.exec("true"), /stopped/);
    });
  });
}
