// Reads a task's config and prompt from either layout: native task.md (YAML frontmatter + prompt
// body) wins when present; else the split pair task.toml + instruction.md.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { isTable } from "./keys.js";

/** Which layout a task folder has: native task.md, or Harbor's split task.toml + instruction.md. */
export type TaskLayout = "native" | "split";

export interface TaskSource {
  layout: TaskLayout;
  /** task.md or task.toml, as messages should name it. */
  configFile: string;
  /** The parsed config; null when the file is malformed (see problems). */
  raw: Record<string, unknown> | null;
  instruction: string | null;
  problems: string[];
}

/** How messages name a file: relative to the working directory when inside it. */
export function displayPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : p;
}

async function readText(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR") return null;
    throw err;
  }
}

/** null when the folder has neither task.md nor any of task.toml / instruction.md. */
export async function readTaskSource(dir: string): Promise<TaskSource | null> {
  const md = await readText(path.join(dir, "task.md"));
  if (md !== null) return nativeSource(md, displayPath(path.join(dir, "task.md")));
  const toml = await readText(path.join(dir, "task.toml"));
  const instruction = await readText(path.join(dir, "instruction.md"));
  if (toml === null && instruction === null) return null;
  const configFile = displayPath(path.join(dir, "task.toml"));
  const source: TaskSource = { layout: "split", configFile, raw: null, instruction, problems: [] };
  if (toml === null) {
    source.problems.push(
      `${configFile}: missing; a split-layout task needs task.toml next to instruction.md`,
    );
  } else {
    source.raw = parseTomlConfig(toml, configFile, source.problems);
  }
  // A multi-step task gives each step its own instruction.md (steps/<name>/); the top-level one is unused.
  if (instruction === null && !hasSteps(source.raw)) {
    source.problems.push(
      `${displayPath(path.join(dir, "instruction.md"))}: missing; write the prompt there (or use task.md)`,
    );
  }
  return source;
}

/** Whether a parsed config declares `steps` (a multi-step task). */
export function hasSteps(raw: Record<string, unknown> | null): boolean {
  return raw !== null && raw.steps !== undefined && !(Array.isArray(raw.steps) && raw.steps.length === 0);
}

function parseTomlConfig(text: string, file: string, problems: string[]): Record<string, unknown> | null {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (err) {
    const e = err as { line?: number; column?: number; message?: string };
    const why = (e.message ?? String(err)).split("\n")[0]?.replace(/^Invalid TOML document:\s*/, "");
    problems.push(
      `${file}:${e.line ?? "?"}:${e.column ?? "?"}: malformed TOML (${why}); fix the syntax on that line`,
    );
    return null;
  }
}

export interface Frontmatter {
  /** The YAML text, or null when the file has no frontmatter. */
  yaml: string | null;
  body: string;
  /** 1-based line of task.md where the YAML starts. */
  yamlLine: number;
  unclosed: boolean;
}

export function splitFrontmatter(text: string): Frontmatter {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if ((lines[0] ?? "").trimEnd() !== "---")
    return { yaml: null, body: lines.join("\n"), yamlLine: 1, unclosed: false };
  const end = lines.findIndex((line, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(line));
  if (end === -1) return { yaml: null, body: "", yamlLine: 2, unclosed: true };
  return {
    yaml: lines.slice(1, end).join("\n"),
    body: lines.slice(end + 1).join("\n"),
    yamlLine: 2,
    unclosed: false,
  };
}

function nativeSource(text: string, configFile: string): TaskSource {
  const source: TaskSource = { layout: "native", configFile, raw: {}, instruction: null, problems: [] };
  const fm = splitFrontmatter(text);
  if (fm.unclosed) {
    source.problems.push(
      `${configFile}:1: frontmatter opens with --- but never closes; add a --- line after it`,
    );
    source.raw = null;
    return source;
  }
  source.instruction = promptOf(fm.body);
  if (fm.yaml === null) return source;
  try {
    const value: unknown = parseYaml(fm.yaml);
    if (value === null || value === undefined) source.raw = {};
    else if (isTable(value)) source.raw = value;
    else {
      source.raw = null;
      source.problems.push(`${configFile}:${fm.yamlLine}: frontmatter must be a mapping of key: value lines`);
    }
  } catch (err) {
    const e = err as { linePos?: { line: number; col: number }[]; message?: string };
    const pos = e.linePos?.[0];
    const line = pos ? pos.line + fm.yamlLine - 1 : fm.yamlLine;
    const why = (e.message ?? String(err)).split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "");
    source.raw = null;
    source.problems.push(
      `${configFile}:${line}: malformed YAML frontmatter (${why}); fix the syntax on that line`,
    );
  }
  return source;
}

/** The body is the prompt; a reserved `## prompt` heading, when present, marks where it starts. */
export function promptOf(body: string): string {
  const lines = body.split("\n");
  const start = lines.findIndex((l) => /^##\s+prompt\s*$/i.test(l));
  if (start === -1) return body.trim();
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => /^##\s+(role:|scene:|user-persona\s*$)/i.test(l));
  return (end === -1 ? rest : rest.slice(0, end)).join("\n").trim();
}
