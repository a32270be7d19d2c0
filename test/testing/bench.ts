// Runs the real `bench` command (through tsx, from source) and captures what a user would see.
import { type ChildProcess, spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TSX = path.join(REPO, "node_modules/tsx/dist/esm/index.mjs");
const MAIN = path.join(REPO, "src/cli/main.ts");

export interface BenchRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function startBench(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): ChildProcess {
  return spawn(process.execPath, ["--import", TSX, MAIN, ...args], {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export function bench(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<BenchRun> {
  const child = startBench(args, opts);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

export async function tempDir(prefix: string): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), `bf-${prefix}-`));
}

export const EXAMPLES = path.join(REPO, "examples/tasks");
export const FIXTURES = path.join(REPO, "test/fixtures/tasks");

/** Every rollout folder under a jobs dir, with its parsed result.json (null when missing). */
export async function rollouts(root: string): Promise<{ dir: string; result: Record<string, any> | null }[]> {
  const found: { dir: string; result: Record<string, any> | null }[] = [];
  const walk = async (dir: string) => {
    for (const e of await fs.readdir(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const full = path.join(dir, e.name);
      if (/__[0-9a-f]{8}$/.test(e.name)) {
        const text = await fs.readFile(path.join(full, "result.json"), "utf8").catch(() => null);
        found.push({ dir: full, result: text ? JSON.parse(text) : null });
      } else await walk(full);
    }
  };
  await walk(root);
  return found.sort((a, b) => a.dir.localeCompare(b.dir));
}

/** Path -> content of every file under a folder, to prove nothing was changed. */
export async function snapshot(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string) => {
    for (const e of await fs.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) out.set(path.relative(root, full), await fs.readFile(full, "utf8"));
    }
  };
  await walk(root);
  return out;
}

/** Poll until `condition` holds; fail (never hang) after `timeoutMs`. */
export async function waitUntil(
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Copies of the hello example whose oracle first sleeps `sleepSec` (then solves it, unless
 * `solve` is false): slow rollouts for tests that stop or watch a run mid-way.
 */
export async function slowHelloTasks(
  dir: string,
  names: string[],
  sleepSec: number,
  solve = true,
): Promise<string> {
  const script = `#!/bin/bash\nsleep ${sleepSec}\n${solve ? "echo 'Hello, world!' > /app/hello.txt\n" : ""}`;
  for (const name of names) {
    await fs.cp(path.join(EXAMPLES, "hello"), path.join(dir, name), { recursive: true });
    await fs.writeFile(path.join(dir, name, "solution/solve.sh"), script);
  }
  return dir;
}

/** A scratch folder for the enclosing describe block: made before its tests, removed after them. */
export function useScratch(prefix: string): () => string {
  let dir = "";
  before(async () => {
    dir = await tempDir(prefix);
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));
  return () => dir;
}

/** Writes a task (or any tree) from a map of relative paths to contents. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text);
  }
}

/** `bench run TASK -a oracle` in the namespace sandbox, quietly, into `jobsDir`. */
export function benchOracle(task: string, jobsDir: string, extra: string[] = []): Promise<BenchRun> {
  return bench([
    "run",
    task,
    "-a",
    "oracle",
    "--sandbox",
    "namespace",
    "--jobs-dir",
    jobsDir,
    "-q",
    ...extra,
  ]);
}
