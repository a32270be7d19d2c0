// Test helpers for the namespace sandbox: Task objects built by hand (independent of the loader),
// temp folders, and a look at the host's process table.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { handTaskConfig } from "../../../task/testing/config.js";
import type { DockerfileSpec, Task } from "../../../task/types.js";
import type { SandboxSpec } from "../../types.js";

export interface TaskShape {
  dir: string;
  workdir?: string | null;
  dockerfile?: Partial<DockerfileSpec>;
  env?: Record<string, string>;
}

export function makeTask(shape: TaskShape): Task {
  const dockerfile: DockerfileSpec | null = shape.dockerfile
    ? {
        path: path.join(shape.dir, "environment", "Dockerfile"),
        baseImage: "debian:bookworm-slim",
        copies: [],
        env: {},
        workdir: null,
        user: null,
        runSteps: [],
        ...shape.dockerfile,
      }
    : null;
  return {
    name: path.basename(shape.dir),
    dir: shape.dir,
    layout: "native",
    instruction: "Do the thing.",
    config: (() => {
      const config = handTaskConfig();
      config.sandbox.workdir = shape.workdir ?? null;
      config.sandbox.env = shape.env ?? {};
      return config;
    })(),
    environmentDir: path.join(shape.dir, "environment"),
    dockerfile,
    verifierDir: path.join(shape.dir, "tests"),
    verifierMount: "/tests",
    testScript: "test.sh",
    solutionDir: null,
    solutionMount: "/solution",
    solveScript: null,
    warnings: [],
  };
}

export function makeSpec(task: Task, extra: Partial<SandboxSpec> = {}): SandboxSpec {
  return { task, jobName: "job", rolloutName: `${task.name}__rollout`, network: false, ...extra };
}

/** A fresh host temp folder, readable by other users (the agent's uid), removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  await fs.chmod(dir, 0o755);
  return { dir, cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

/** Host pids of `sleep <marker>` processes (exact argv, so bwrap's own command line does not count). */
export async function hostPidsWith(marker: string): Promise<number[]> {
  const argv = `sleep\0${marker}\0`;
  const pids: number[] = [];
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await fs.readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline === argv) pids.push(Number(name));
  }
  return pids;
}

/**
 * Polls until some host process carries `marker` (the command really started its child); bounded
 * only against a hang, generously: a loaded machine can take seconds to start a sandbox.
 */
export async function waitForHostProcess(marker: string, boundMs = 60_000): Promise<number[]> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const pids = await hostPidsWith(marker);
    if (pids.length > 0) return pids;
    if (Date.now() > deadline)
      throw new Error(`no host process "sleep ${marker}" appeared within ${boundMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A unique `sleep` duration to recognise our own background child in the host's process table. */
export function sleepMarker(): string {
  return `300.${Math.floor(Math.random() * 1e9)}`;
}
