// Files in and out of the namespace sandbox: uploads, downloads, the Dockerfile's COPYs, and
// symlinks the agent plants to reach host files.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createNamespaceBackend } from "./backend.js";
import type { NamespaceSandbox } from "./sandbox.js";
import { makeSpec, makeTask, tempDir } from "./testing/kit.js";

const hostRoot = process.getuid?.() === 0;

for (const tool of ["bwrap", "unshare"] as const) {
  describe(`namespace sandbox files with ${tool}`, () => {
    const backend = createNamespaceBackend({ tool });
    let host: string;
    let cleanup: () => Promise<void>;
    let sandbox: NamespaceSandbox;
    const sandboxes: NamespaceSandbox[] = [];

    before(async () => {
      ({ dir: host, cleanup } = await tempDir("ns-files"));
      const env = path.join(host, "task", "environment");
      await fs.mkdir(path.join(env, "data", "nested"), { recursive: true });
      await fs.writeFile(path.join(env, "a.txt"), "A");
      await fs.writeFile(path.join(env, "b.conf"), "B");
      await fs.writeFile(path.join(env, "data", "nested", "d.txt"), "D");
      const task = makeTask({
        dir: path.join(host, "task"),
        dockerfile: {
          workdir: "/app",
          copies: [
            { sources: [path.join(env, "a.txt")], dest: "/app/", line: 3 },
            { sources: [path.join(env, "data")], dest: "/opt/data", line: 4 },
            { sources: [path.join(env, "b.conf")], dest: "/etc/b.conf", line: 5 },
            { sources: [path.join(env, "a.txt")], dest: "rel/renamed.txt", line: 6 },
          ],
        },
      });
      sandbox = await backend.create(makeSpec(task));
      sandboxes.push(sandbox);
    });

    after(async () => {
      for (const s of sandboxes) await s.stop();
      await cleanup();
    });

    it("places the Dockerfile's COPYs and warns about those under read-only system folders", async () => {
      const r = await sandbox.exec(
        "cat /app/a.txt /opt/data/nested/d.txt /app/rel/renamed.txt; echo >> /app/a.txt",
      );
      assert.deepEqual([r.exitCode, r.stdout], [0, "ADA"], r.stderr);
      const warning = sandbox.warnings.find((w) => w.includes("/etc/b.conf"));
      assert.ok(warning, `no warning about /etc/b.conf in ${JSON.stringify(sandbox.warnings)}`);
      assert.match(warning, /Dockerfile:5.*use sandbox: "container" for this task/);
    });

    it("uploads files and folders, folder contents landing under the target", async () => {
      const tests = path.join(host, "tests");
      await fs.mkdir(path.join(tests, "sub"), { recursive: true });
      await fs.writeFile(path.join(tests, "test.sh"), "echo ok", { mode: 0o600 });
      await fs.writeFile(path.join(tests, "sub", "x.txt"), "X");
      await fs.writeFile(path.join(host, "one.txt"), "ONE");
      await sandbox.upload(tests, "/tests");
      await sandbox.upload(path.join(host, "one.txt"), "/app/in/one.txt");
      await sandbox.upload(path.join(host, "one.txt"), "/tmp/");
      const r = await sandbox.exec(
        "cat /tests/test.sh /tests/sub/x.txt /app/in/one.txt /tmp/one.txt && echo more >> /app/in/one.txt",
      );
      assert.deepEqual([r.exitCode, r.stdout], [0, "echo okXONEONE"], r.stderr);
      if (hostRoot) {
        const owners = await sandbox.exec("stat -c %u /tests/test.sh /app/in", { user: "root" });
        assert.equal(
          owners.stdout,
          `0\n${1000}\n`,
          "verifier files stay root's, workspace uploads become the agent's",
        );
        const write = await sandbox.exec("echo x >> /tests/test.sh");
        assert.notEqual(write.exitCode, 0, "the agent could modify the root-owned tests");
      }
      await assert.rejects(
        sandbox.upload(path.join(host, "one.txt"), "/usr/local/one.txt"),
        /read-only.*container/,
      );
    });

    it("downloads files and folders; a missing source copies nothing", async () => {
      const made = await sandbox.exec(
        "mkdir -p /logs/agent/deep && echo T > /logs/agent/deep/t.json && echo V > /logs/verifier/reward.txt",
        {
          user: "root",
        },
      );
      assert.equal(made.exitCode, 0, made.stderr);
      const out = path.join(host, "out");
      await sandbox.download("/logs/agent", path.join(out, "agent"));
      await sandbox.download("/logs/verifier/reward.txt", path.join(out, "reward.txt"));
      await sandbox.download("/logs/nothing-here", path.join(out, "missing"));
      assert.equal(await fs.readFile(path.join(out, "agent", "deep", "t.json"), "utf8"), "T\n");
      assert.equal(await fs.readFile(path.join(out, "reward.txt"), "utf8"), "V\n");
      await assert.rejects(fs.access(path.join(out, "missing")));
    });

    it("never follows a link the agent planted to a host file", async () => {
      const secret = path.join(host, "host-secret.txt");
      await fs.writeFile(secret, "host secret");
      const planted = await sandbox.exec(
        `mkdir -p /logs/agent/links && ln -s ${secret} /logs/agent/links/abs && echo in > /logs/agent/links/real && ln -s real /logs/agent/links/rel && ln -s ${host} /app/escape`,
      );
      assert.equal(planted.exitCode, 0, planted.stderr);
      const out = path.join(host, "links-out");
      await sandbox.download("/logs/agent/links", out);
      // The dropped link is named in the copy's record of what it left out.
      assert.deepEqual((await fs.readdir(out)).sort(), [".benchflow-truncated.json", "real", "rel"]);
      await sandbox.download("/logs/agent/links/abs", path.join(host, "abs-out"));
      await assert.rejects(
        fs.access(path.join(host, "abs-out")),
        "a link to a host path was read on the host",
      );
      await sandbox.upload(path.join(host, "one.txt"), "/app/escape/dropped.txt");
      await assert.rejects(
        fs.access(path.join(host, "dropped.txt")),
        "an upload followed the link onto the host",
      );
    });

    it("shows extra read-only host paths but covers a task folder inside them", async () => {
      const { dir: tools, cleanup: done } = await tempDir("ns-tools");
      try {
        await fs.writeFile(path.join(tools, "tool.txt"), "tool");
        await fs.mkdir(path.join(tools, "task"));
        await fs.writeFile(path.join(tools, "task", "solution.sh"), "answer");
        const ro = createNamespaceBackend({ tool, readOnlyPaths: [tools] });
        const s = await ro.create(makeSpec(makeTask({ dir: path.join(tools, "task") })));
        sandboxes.push(s);
        const r = await s.exec(
          `cat ${tools}/tool.txt; ls -A ${tools}/task; touch ${tools}/new || echo read-only`,
          {
            user: "root",
          },
        );
        assert.equal(r.stdout, "toolread-only\n", r.stderr);
      } finally {
        await done();
      }
    });
  });
}
