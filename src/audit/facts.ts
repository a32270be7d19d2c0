// What the audit reads from a task's own files, before anything runs: which exploits can apply to
// it. Read statically (the verifier's text, the Dockerfile's ENV and COPY lines), so the predicates
// stay cheap and deterministic; an exploit that probes at run time still only runs where its
// predicate says the hole can exist.
import { promises as fs } from "node:fs";
import path from "node:path";
import { type Task, workspaceOf } from "../task/types.js";

/** A verifier file bigger than this is not read for facts (a data file, not a script). */
const TEXT_CAP = 256 * 1024;

export interface TaskFacts {
  /** The workspace: the task's workdir or /app. */
  workspace: string;
  /** Where the tests are mounted in the sandbox (/tests or /verifier). */
  testsMount: string;
  /** The verifier's scripts as text (every file of the tests folders under the cap, joined). */
  testsText: string;
  /** The names of the files in the tests folders, relative to them. */
  testsFiles: string[];
  usesPython: boolean;
  usesPytest: boolean;
  usesMake: boolean;
  /** The verifier copies its tests (or a file of them) into the workspace and may run them from there. */
  copiesTestsIntoWorkspace: boolean;
  /** Workspace files the verifier names (its deliverables and the programs it runs), outside the tests. */
  workspaceFiles: string[];
  /** Test files the image puts into the workspace (test_*.py, *_test.py, test*.sh). */
  workspaceTests: string[];
  /** The task sets PATH (Dockerfile ENV or [environment].env): a folder the agent writes may be on it. */
  setsPath: boolean;
  /** The task sets PYTHONPATH: a folder the agent writes may be on it. */
  setsPythonPath: boolean;
  /** BASH_ENV or ENV of the image: a file every bash of the verifier sources. */
  shellStartup: string[];
  /** Quoted words of the verifier, for a JSON file with the expected keys (values null). */
  quotedKeys: string[];
  /** A tests file that looks like the expected output (expected, answer, golden, reference). */
  expectedFile: string | null;
  multiStep: boolean;
}

async function listFiles(dir: string, base = dir): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(full, base)));
    else if (e.isFile()) out.push(path.relative(base, full));
  }
  return out.sort();
}

async function readSmall(file: string): Promise<string> {
  const st = await fs.stat(file).catch(() => null);
  if (!st || st.size > TEXT_CAP) return "";
  return fs.readFile(file, "utf8").catch(() => "");
}

/** The tests folders of a task: its own, then each step's. */
function testsDirs(task: Task): string[] {
  const dirs = [task.verifierDir];
  for (const step of task.steps ?? []) dirs.push(...step.testsDirs);
  return [...new Set(dirs)];
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Absolute workspace paths the text names, outside the tests' own copy in the workspace. */
function workspacePaths(text: string, workspace: string): string[] {
  const re = new RegExp(`${escapeRe(workspace)}/[A-Za-z0-9_./-]+`, "g");
  const found = new Set<string>();
  for (const m of text.match(re) ?? []) {
    const p = m.replace(/[./]+$/, "");
    const rel = path.posix.relative(workspace, p);
    if (!rel || rel.startsWith("..") || /^tests?(\/|$)/.test(rel) || rel.includes("*")) continue;
    if (!path.posix.extname(p) && text.includes(`${p}/`)) continue; // a folder the text goes into
    found.add(p);
  }
  return [...found].sort();
}

function copiesTests(text: string, mount: string): boolean {
  return text.split("\n").some((line) => /\b(cp|rsync|install)\b/.test(line) && line.includes(mount));
}

function quotedWords(text: string): string[] {
  const words = new Set<string>();
  for (const m of text.matchAll(/["']([A-Za-z_][A-Za-z0-9_-]{0,40})["']/g)) if (m[1]) words.add(m[1]);
  return [...words].slice(0, 40);
}

const EXPECTED_NAME = /(expected|answer|golden|reference|solution)/i;

export async function readFacts(task: Task): Promise<TaskFacts> {
  const workspace = workspaceOf(task);
  const testsFiles: string[] = [];
  const texts: string[] = [];
  for (const dir of testsDirs(task)) {
    for (const rel of await listFiles(dir)) {
      testsFiles.push(rel);
      texts.push(await readSmall(path.join(dir, rel)));
    }
  }
  const testsText = texts.join("\n");
  const env = { ...(task.dockerfile?.env ?? {}), ...task.config.sandbox.env };
  const copies = task.dockerfile?.copies ?? [];
  const workspaceTests = copies
    .flatMap((c) =>
      c.sources.map((s) => (c.dest.endsWith("/") ? path.posix.join(c.dest, path.basename(s)) : c.dest)),
    )
    .filter(
      (d) =>
        d.startsWith(`${workspace}/`) &&
        /(^|\/)(test_[^/]*\.py|[^/]*_test\.py|test[^/]*\.sh|tests?)$/.test(d),
    );
  return {
    workspace,
    testsMount: task.verifierMount,
    testsText,
    testsFiles,
    usesPython: /\bpython[0-9.]*\b/.test(testsText) || testsFiles.some((f) => f.endsWith(".py")),
    usesPytest: /\bpytest\b/.test(testsText),
    usesMake: /(^|[\s;&|(])make\b/m.test(testsText),
    copiesTestsIntoWorkspace: copiesTests(testsText, task.verifierMount),
    workspaceFiles: workspacePaths(testsText, workspace),
    workspaceTests,
    setsPath: "PATH" in env,
    setsPythonPath: "PYTHONPATH" in env,
    shellStartup: ["BASH_ENV", "ENV"].flatMap((k) => (env[k] ? [env[k]] : [])),
    quotedKeys: quotedWords(testsText),
    expectedFile:
      testsFiles.find((f) => EXPECTED_NAME.test(path.basename(f)) && !/\.(sh|py)$/.test(f)) ?? null,
    multiStep: (task.steps?.length ?? 0) > 0,
  };
}
