// Looks at a task folder once and collects everything wrong with it: `loadTask` refuses on the
// blocking problems, `checkTask` reports all of them. Nothing here stops at the first problem.
import { promises as fs } from "node:fs";
import path from "node:path";
import { normaliseConfig } from "./config.js";
import { listTaskFiles } from "./digest.js";
import { readDockerfile } from "./dockerfile.js";
import { inspectSteps } from "./inspect-steps.js";
import { checkKeys } from "./keys.js";
import { displayPath, hasSteps, readTaskSource } from "./source.js";
import type { DockerfileSpec, Task } from "./types.js";

export interface TaskInspection {
  /** null when the folder is not a task at all. */
  task: Task | null;
  /** Problems that make the task unloadable. */
  problems: string[];
  /** Problems a check reports although the task still loads (no Dockerfile, empty test.sh, ...). */
  checkProblems: string[];
  warnings: string[];
}

export const TASK_FOLDER_HELP =
  "a task folder needs task.md (or task.toml + instruction.md), environment/Dockerfile and tests/test.sh (or verifier/test.sh)";

async function kind(p: string): Promise<"file" | "dir" | null> {
  const st = await fs.stat(p).catch(() => null);
  return st ? (st.isDirectory() ? "dir" : "file") : null;
}

export async function inspectTask(dirArg: string): Promise<TaskInspection> {
  const dir = path.resolve(dirArg);
  const out: TaskInspection = { task: null, problems: [], checkProblems: [], warnings: [] };
  if ((await kind(dir)) !== "dir") {
    out.problems.push(`task folder ${displayPath(dir)} does not exist`);
    return out;
  }
  const source = await readTaskSource(dir);
  if (!source) {
    out.problems.push(`${displayPath(dir)} is not a task folder: ${TASK_FOLDER_HELP}`);
    return out;
  }
  out.problems.push(...source.problems);
  if (source.layout === "native") {
    const ignored = [];
    for (const name of ["task.toml", "instruction.md"])
      if (await kind(path.join(dir, name))) ignored.push(name);
    if (ignored.length > 0)
      out.warnings.push(`${source.configFile} exists, so ${ignored.join(" and ")} are ignored`);
  }
  const keys = checkKeys(source.raw ?? {}, source.configFile);
  const normalised = normaliseConfig(source.raw ?? {}, source.configFile);
  out.problems.push(...keys.refusals, ...normalised.problems);
  out.warnings.push(...keys.warnings, ...normalised.warnings);
  const multiStep = hasSteps(source.raw);
  if (multiStep && source.layout === "native") {
    // Upstream refuses multi-step tasks; Harbor's layout is the one that has them.
    out.problems.push(
      `${source.configFile}: steps is not supported in the task.md layout (upstream BenchFlow refuses multi-step tasks); write the task in Harbor's layout: task.toml with [[steps]] and steps/<name>/instruction.md, tests/test.sh`,
    );
  }
  if (!multiStep && source.instruction !== null && source.instruction.trim() === "") {
    const where =
      source.layout === "native" ? `${source.configFile}: the body (the prompt)` : "instruction.md";
    out.problems.push(`${where} is empty; write the instruction the agent gets`);
  }

  const environmentDir = path.join(dir, "environment");
  const dockerfile = await inspectEnvironment(environmentDir, out);
  const verifier = await pickFolder(dir, ["verifier", "/verifier"], ["tests", "/tests"]);
  const oracle = await pickFolder(dir, ["oracle", "/oracle"], ["solution", "/solution"]);
  let solveScript: string | null = null;
  const steps =
    multiStep && source.layout === "split" ? await inspectSteps(dir, normalised.config.steps ?? []) : null;
  if (steps) {
    // Each step has its own tests and solution; the top-level folders are shared fallbacks.
    out.problems.push(...steps.problems);
    out.checkProblems.push(...steps.checkProblems);
    out.warnings.push(...steps.warnings);
    if (oracle.exists && oracle.isDir)
      solveScript = await inspectOracle(oracle, { ...out, checkProblems: [], warnings: [] });
  } else {
    await inspectVerifier(verifier, out);
    solveScript = await inspectOracle(oracle, out);
  }

  const { symlinks } = await listTaskFiles(dir);
  if (symlinks.length > 0) {
    out.warnings.push(
      `${displayPath(dir)} contains symlinks, which sandbox uploads skip: ${symlinks.slice(0, 5).join(", ")}${symlinks.length > 5 ? ", ..." : ""}`,
    );
  }
  out.task = {
    name: path.basename(dir),
    dir,
    layout: source.layout,
    instruction: source.instruction?.trim() ?? "",
    config: normalised.config,
    environmentDir,
    dockerfile,
    verifierDir: verifier.path,
    verifierMount: verifier.mount as Task["verifierMount"],
    testScript: "test.sh",
    solutionDir: oracle.exists ? oracle.path : null,
    solutionMount: oracle.mount as Task["solutionMount"],
    solveScript,
    steps: steps?.steps ?? [],
    warnings: [...new Set(out.warnings)],
  };
  out.warnings = out.task.warnings;
  return out;
}

interface Folder {
  path: string;
  name: string;
  mount: string;
  exists: boolean;
  isDir: boolean;
  /** The legacy folder also exists but is ignored. */
  shadows: string | null;
}

/** The native folder is authoritative whenever it exists, even empty or broken: no fallback. */
async function pickFolder(dir: string, native: [string, string], legacy: [string, string]): Promise<Folder> {
  const nativeKind = await kind(path.join(dir, native[0]));
  const legacyKind = await kind(path.join(dir, legacy[0]));
  const [name, mount] = nativeKind !== null ? native : legacy;
  const found = nativeKind ?? legacyKind;
  return {
    path: path.join(dir, name),
    name,
    mount,
    exists: found !== null,
    isDir: found === "dir",
    shadows: nativeKind !== null && legacyKind !== null ? legacy[0] : null,
  };
}

async function inspectEnvironment(
  environmentDir: string,
  out: TaskInspection,
): Promise<DockerfileSpec | null> {
  const shown = displayPath(environmentDir);
  if ((await kind(environmentDir)) !== "dir") {
    out.checkProblems.push(`${shown}/: missing; add environment/Dockerfile (e.g. FROM debian:bookworm-slim)`);
    return null;
  }
  const parsed = await readDockerfile(environmentDir);
  if (!parsed) {
    out.checkProblems.push(`${shown}/Dockerfile: missing; add one (e.g. FROM debian:bookworm-slim)`);
    return null;
  }
  out.problems.push(...parsed.problems);
  out.warnings.push(...parsed.warnings);
  // RUN steps are valid; only the namespace sandbox cannot apply them, and the run plan says so there.
  return { ...parsed.spec, path: path.resolve(parsed.spec.path) };
}

async function inspectVerifier(folder: Folder, out: TaskInspection): Promise<void> {
  const shown = displayPath(folder.path);
  const note = folder.shadows ? ` (${folder.name}/ exists, so ${folder.shadows}/ is ignored)` : "";
  if (!folder.exists) {
    out.problems.push(
      `${displayPath(path.dirname(folder.path))}: no verifier; add tests/test.sh (or verifier/test.sh)`,
    );
    return;
  }
  if (!folder.isDir) {
    out.problems.push(
      `${shown}: is a file, not a folder${note}; put test.sh inside a ${folder.name}/ folder`,
    );
    return;
  }
  const script = path.join(folder.path, "test.sh");
  const st = await fs.stat(script).catch(() => null);
  if (!st?.isFile()) {
    out.problems.push(
      `${shown}/test.sh: missing${note}; add the test script that writes /logs/verifier/reward.txt`,
    );
    return;
  }
  if ((await fs.readFile(script, "utf8")).trim() === "") {
    out.checkProblems.push(`${shown}/test.sh: empty; it must write /logs/verifier/reward.txt or reward.json`);
    out.warnings.push(`${shown}/test.sh is empty, so every rollout will be unscored`);
  }
}

async function inspectOracle(folder: Folder, out: TaskInspection): Promise<string | null> {
  if (!folder.exists) return null;
  const shown = displayPath(folder.path);
  const note = folder.shadows ? ` (${folder.name}/ exists, so ${folder.shadows}/ is ignored)` : "";
  const st = folder.isDir ? await fs.stat(path.join(folder.path, "solve.sh")).catch(() => null) : null;
  if (st?.isFile()) return "solve.sh";
  out.checkProblems.push(`${shown}/solve.sh: missing${note}; add it or remove ${folder.name}/`);
  out.warnings.push(`${shown} has no solve.sh, so the oracle agent cannot run this task`);
  return null;
}
