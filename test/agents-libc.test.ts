// A glibc agent bundle in a musl image: the container backend sees (by running the binary) that the
// image cannot run the mounted bundle, installs the agent's musl build into a derived image once,
// and the trial runs from it with the agent at the mount's path. The musl image is made without a
// registry from Debian's busybox-static, bash-static and musl packages (scripts/setup-podman.sh installs them).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureBundle } from "../src/agents/in-sandbox/bundle.js";
import { claudeCodeDef } from "../src/agents/in-sandbox/claude-code.js";
import { imageFallbackFor } from "../src/agents/in-sandbox/image-install.js";
import type { Engine } from "../src/sandbox/container/engine/engine.js";
import {
  type AgentBundleMount,
  derivedTag,
  type InstallChoice,
  resolveAgentImage,
} from "../src/sandbox/container/image/agent-image.js";
import { buildTaskImage } from "../src/sandbox/container/image/image.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { loadEndpointScript } from "../src/scripted-endpoint/scripted-server.js";
import { loadTask } from "../src/task/load.js";
import { readJson, runAgent } from "./testing/agents.js";
import { REPO, tempDir } from "./testing/bench.js";

const HOST_FILES = {
  busybox: "/bin/busybox",
  "bash-static": "/bin/bash-static",
  "ld-musl-x86_64.so.1": "/lib/ld-musl-x86_64.so.1",
};
const MOUNT = `/opt/benchflow/agents/claude-code@${claudeCodeDef.bundle.version}`;
let root: string;
let taskDir: string;

before(async () => {
  root = await tempDir("agents-libc");
  taskDir = path.join(root, "musl-hello");
  await fs.cp(path.join(REPO, "test/fixtures/musl-hello"), taskDir, { recursive: true });
  for (const [name, from] of Object.entries(HOST_FILES)) {
    await fs.copyFile(from, path.join(taskDir, "environment", name)).catch(() => {
      throw new Error(
        `${from} is missing: apt-get install busybox-static bash-static musl (scripts/setup-podman.sh does)`,
      );
    });
  }
});
after(() => fs.rm(root, { recursive: true, force: true }));

async function removeImage(engine: Engine, image: string): Promise<void> {
  await engine.client
    .send("DELETE", `/images/${encodeURIComponent(image)}`, { query: { force: true } })
    .catch(() => undefined);
}

/** claude-code's bundle mount with its fallback, as the agent makes it for a container trial. */
async function claudeMount(verdictDir: string, choices: InstallChoice[]): Promise<AgentBundleMount> {
  const bundle = await ensureBundle(claudeCodeDef.bundle);
  const binary = `${MOUNT}/${await claudeCodeDef.binary()}`;
  const state = { readyAt: 0, stagedSkills: null, relay: false, binary, binDir: `${MOUNT}/bin`, loader: "x" };
  const fb = await imageFallbackFor(claudeCodeDef, {
    binary,
    record: {},
    state,
    signal: new AbortController().signal,
  });
  assert.ok(fb);
  return {
    hostPath: bundle.dir,
    sandboxPath: MOUNT,
    agentFallback: { ...fb, verdictDir, onInstallPath: (c) => choices.push(c) },
  };
}

describe("agent bundles in an image with another C library", () => {
  it("probes the image, builds the derived musl image once, and keeps the mount for a glibc image", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const task = await loadTask(taskDir);
    const { image: musl } = await buildTaskImage(task, { engine });
    const verdictDir = path.join(root, "verdicts");
    const choices: InstallChoice[] = [];
    const mount = await claudeMount(verdictDir, choices);
    const imageId = (
      await engine.client.json<{ Id: string }>("GET", `/images/${encodeURIComponent(musl)}/json`)
    ).Id;
    const tag = derivedTag(
      { agent: "claude-code", version: claudeCodeDef.bundle.version },
      imageId.replace(/^sha256:/, ""),
      "musl",
    );
    await removeImage(engine, tag);

    const first = await resolveAgentImage(engine, musl, [mount], { taskName: task.name, logDir: root });
    assert.equal(first.image, tag);
    assert.match(tag, /^benchflow-agent-claude-code-2\.1\.197:[0-9a-f]{12}$/);
    assert.deepEqual(first.mounts, [], "the bundle is in the image, not mounted");
    assert.match(
      first.warnings[0] ?? "",
      /claude-code's bundle cannot run in image .* \(musl\); installed it into image benchflow-agent-claude-code/,
    );
    assert.deepEqual(
      choices.map((c) => [c.path, c.libc, c.builtNow]),
      [["image-install", "musl", true]],
    );
    const verdicts = await fs.readdir(verdictDir);
    assert.equal(verdicts.length, 1);
    const verdict = await readJson(path.join(verdictDir, verdicts[0] as string));
    assert.equal(verdict.runs, false);
    assert.equal(verdict.libc, "musl");

    // The derived image runs the agent at the path the mount would have used (the engine's own CLI).
    const run = spawnSync(
      engine.isPodman ? "podman" : "docker",
      ["run", "--rm", "--network", "none", tag, `${MOUNT}/${await claudeCodeDef.binary()}`, "--version"],
      {
        encoding: "utf8",
      },
    );
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /2\.1\.197 \(Claude Code\)/);

    const again = await resolveAgentImage(engine, musl, [mount], { taskName: task.name });
    assert.equal(again.image, tag);
    assert.equal(choices[1]?.builtNow, false, "the second trial reuses the derived image");

    // A glibc image runs the mounted bundle: no derived image, the mount stays.
    const debian = "docker.io/library/debian:bookworm-slim";
    const glibc = await resolveAgentImage(engine, debian, [mount], { taskName: "debian" });
    assert.equal(glibc.image, debian);
    assert.deepEqual(glibc.mounts, [{ hostPath: mount.hostPath, sandboxPath: MOUNT }]);
    assert.deepEqual([choices[2]?.path, choices[2]?.libc], ["bundle-mount", "glibc"]);
    assert.equal((await fs.readdir(verdictDir)).length, 2, "each (image, version) verdict is kept");
  });

  it("claude-code in the musl image: the trial runs from the derived image and scores 1.0, saying which path it took", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const jobsDir = path.join(root, "jobs");
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/claude-code-hello.json"));
    const warnings: string[] = [];
    const { result, found } = await runAgent(script, {
      tasks: taskDir,
      agent: "claude-code",
      trials: 2,
      sandbox: "container",
      jobsDir,
      onEvent: (e) => {
        if (e.type === "warning") warnings.push(e.message);
      },
    });
    assert.deepEqual(
      result.results.map((r) => [r.rewards?.reward ?? null, r.error]),
      [
        [1, null],
        [1, null],
      ],
      JSON.stringify(result.results.map((r) => [r.verifier_error, r.test_last_line, r.n_tool_calls])),
    );
    const installs = warnings.filter((w) => /installed it into image/.test(w));
    assert.equal(installs.length, 1, `said once per run: ${warnings.join(" | ")}`);
    assert.match(
      installs[0] ?? "",
      /^task musl-hello: claude-code's bundle cannot run in image \S+ \(musl\)/,
    );
    for (const { dir } of found) {
      const config = await readJson(path.join(dir, "config.json"));
      assert.equal(config.agent_install_path, "image-install");
      assert.equal(config.agent_image_libc, "musl");
      assert.match(config.sandbox_image, /^benchflow-agent-claude-code-2\.1\.197:[0-9a-f]{12}$/);
      assert.equal(config.agent_image, config.sandbox_image);
    }
  });
});
