// Shared by the container tests: an engine or a loud reason why not, and small tasks made by hand.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { handTaskConfig } from "../../../task/testing/config.js";
import type { Task, TaskConfig } from "../../../task/types.js";
import { connectEngine, type Engine } from "../engine/engine.js";

export const SKIP_ENV = "BENCHFLOW_SKIP_CONTAINER_TESTS";

/** The engine, or (unless BENCHFLOW_SKIP_CONTAINER_TESTS=1) a failure that says how to get one. */
export async function engineOrSkip(t: TestContext): Promise<Engine | null> {
  if (process.env[SKIP_ENV] === "1") {
    t.skip(`${SKIP_ENV}=1: container tests skipped on request`);
    return null;
  }
  try {
    return await connectEngine();
  } catch (err) {
    throw new Error(
      `these tests need a container engine: ${(err as Error).message}. ` +
        `Run scripts/setup-podman.sh (as root), or set ${SKIP_ENV}=1 to skip them.`,
    );
  }
}

export function defaultConfig(): TaskConfig {
  const config = handTaskConfig();
  config.agent.timeoutSec = 60;
  config.sandbox.memoryMb = 512;
  config.sandbox.buildTimeoutSec = 300;
  return config;
}

export interface TaskFixture {
  name: string;
  dockerfile: string;
  /** Extra files under environment/, by relative path. */
  files?: Record<string, string>;
  tests?: Record<string, string>;
  configure?: (config: TaskConfig) => void;
  baseImage?: string;
  workdir?: string;
}

/** Writes a split-layout task under a fresh temp folder and returns it as a Task. */
export async function makeTask(f: TaskFixture): Promise<Task> {
  const dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "bf-ctask-")), f.name);
  const environmentDir = path.join(dir, "environment");
  const write = async (rel: string, text: string) => {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text, { mode: rel.endsWith(".sh") ? 0o755 : 0o644 });
  };
  await write("environment/Dockerfile", f.dockerfile);
  for (const [rel, text] of Object.entries(f.files ?? {})) await write(`environment/${rel}`, text);
  for (const [rel, text] of Object.entries(
    f.tests ?? { "test.sh": "echo 1 > /logs/verifier/reward.txt\n" },
  )) {
    await write(`tests/${rel}`, text);
  }
  const config = defaultConfig();
  f.configure?.(config);
  return {
    name: f.name,
    dir,
    layout: "split",
    instruction: "do the thing",
    config,
    environmentDir,
    dockerfile: {
      path: path.join(environmentDir, "Dockerfile"),
      baseImage: f.baseImage ?? /^FROM\s+(\S+)/im.exec(f.dockerfile)?.[1] ?? null,
      copies: [],
      env: {},
      workdir: f.workdir ?? null,
      user: null,
      runSteps: [],
    },
    verifierDir: path.join(dir, "tests"),
    verifierMount: "/tests",
    testScript: "test.sh",
    solutionDir: null,
    solutionMount: "/solution",
    solveScript: null,
    warnings: [],
  };
}

export async function removeTaskDir(task: Task): Promise<void> {
  await fs.rm(path.dirname(task.dir), { recursive: true, force: true });
}
