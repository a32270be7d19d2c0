// The namespace sandbox as a user without root: user namespaces map the verifier to root and leave
// the agent as the user itself. Runs a fixture script under setpriv as uid 1000 (needs host root).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { tempDir } from "./testing/kit.js";

const run = promisify(execFile);
const hostRoot = process.getuid?.() === 0;
const fixture = path.join(import.meta.dirname, "fixtures", "nonroot-run.ts");

describe("namespace sandbox as a non-root user", { skip: !hostRoot && "needs root to switch users" }, () => {
  for (const tool of ["bwrap", "unshare"] as const) {
    it(`works with ${tool}`, async () => {
      const task = await tempDir("ns-nonroot-task");
      const out = await tempDir("ns-nonroot-out");
      await fs.chown(out.dir, 1000, 1000);
      try {
        const { stdout } = await run(
          "setpriv",
          [
            "--reuid=1000",
            "--regid=1000",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            process.execPath,
            "--import",
            "tsx",
            fixture,
            tool,
            task.dir,
            out.dir,
          ],
          { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: out.dir }, cwd: process.cwd() },
        );
        const seen = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
        assert.equal(seen.reason, null);
        assert.equal(seen.uid, 1000);
        assert.equal(seen.agentIsNonRoot, true);
        assert.equal(seen.agent, "1000\n", seen.agentErr);
        assert.equal(seen.root, "0\nmine\nusr-ro\ntask-hidden\nagent\n", seen.rootErr);
        assert.equal(seen.reward, "1\n");
        assert.equal(seen.scratchGone, true);
        // No cgroup or disk of our own without root: rlimits, and the disk limit said to be missing.
        assert.equal(seen.limits.pids.applied, "rlimit");
        assert.equal(seen.limits.memory_mb.applied, "rlimit");
        assert.match(seen.limits.storage_mb.applied, /^not_applied: /);
        assert.equal(seen.rootAgentIsNonRoot, false);
        assert.equal(seen.rootAgentRun, "0\n4096\n524288\n");
        assert.ok(
          seen.rootAgentWarnings.some((w: string) => w.includes('user = "root"') && w.includes("/tests")),
          seen.rootAgentWarnings.join("\n"),
        );
        if (((await fs.stat("/dev/net/tun")).mode & 0o006) === 0o006) {
          assert.equal(seen.netError, null);
          assert.equal(seen.netAgent, "1000\nmine\nno-host\nHTTP/1.1 200\n", seen.netAgentErr);
          assert.equal(seen.netRoot, "0\nmine\n");
        } else {
          // Never the host's network instead: a refusal that names the cause and the fix.
          assert.match(seen.netError, /\/dev\/net\/tun.*Fix: use sandbox: "container", or run as root/s);
          assert.notEqual(seen.netAgent, "1000\nmine\nno-host\nHTTP/1.1 200\n");
        }
      } finally {
        await task.cleanup();
        await out.cleanup();
      }
    });
  }
});
