// What the namespace sandbox can apply from environment/Dockerfile without building an image: the
// base image, COPY/ADD, ENV, WORKDIR, USER; RUN steps are collected so callers can say they are skipped.
import { promises as fs } from "node:fs";
import path from "node:path";
import { copyOf } from "./dockerfile-copy.js";
import { type Instruction, splitInstructions, substitute, words } from "./dockerfile-lexer.js";
import type { DockerfileCopy, DockerfileSpec } from "./types.js";

export interface DockerfileResult {
  spec: DockerfileSpec;
  /** Things skipped or approximated (COPY --from, URLs, archives, ...). */
  warnings: string[];
  /** Things that would make a build fail (missing sources, no FROM, unknown instruction, ...). */
  problems: string[];
}

/** Reads `environmentDir/Dockerfile`; null when there is none. */
export async function readDockerfile(environmentDir: string): Promise<DockerfileResult | null> {
  const file = path.join(environmentDir, "Dockerfile");
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
  return parseDockerfile(text, { path: file, contextDir: environmentDir });
}

interface Stage {
  name: string | null;
  baseImage: string;
  env: Record<string, string>;
  args: Record<string, string>;
  workdir: string | null;
  user: string | null;
  copies: DockerfileCopy[];
  runSteps: string[];
}

// Docker's usual PATH, so `ENV PATH=/opt/bin:$PATH` keeps the system folders.
const BASE_VARS: Record<string, string> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
};

const IGNORED = new Set([
  "CMD",
  "ENTRYPOINT",
  "EXPOSE",
  "LABEL",
  "MAINTAINER",
  "HEALTHCHECK",
  "SHELL",
  "VOLUME",
  "STOPSIGNAL",
  "ONBUILD",
]);

export function parseDockerfile(text: string, opts: { path: string; contextDir: string }): DockerfileResult {
  const { instructions, escapeChar } = splitInstructions(text);
  const warnings: string[] = [];
  const problems: string[] = [];
  const at = (line: number) => `${opts.path}:${line}`;
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  let stage: Stage | null = null;

  for (const ins of instructions) {
    if (ins.keyword === "FROM") {
      stage = fromStage(ins, stages, globalArgs, escapeChar);
      stages.push(stage);
      continue;
    }
    if (ins.keyword === "ARG") {
      declareArgs(
        ins,
        stage ? stage.args : globalArgs,
        stage ? { ...globalArgs, ...stage.env } : {},
        globalArgs,
        escapeChar,
      );
      continue;
    }
    if (!stage) {
      problems.push(
        `${at(ins.line)}: ${ins.keyword} comes before FROM; start the Dockerfile with FROM <image>`,
      );
      continue;
    }
    const vars = { ...BASE_VARS, ...stage.args, ...stage.env };
    switch (ins.keyword) {
      case "ENV":
        Object.assign(stage.env, envPairs(ins.args, vars, escapeChar));
        break;
      case "WORKDIR":
        stage.workdir = path.posix.resolve(stage.workdir ?? "/", substitute(ins.args, vars, escapeChar));
        break;
      case "USER":
        stage.user = substitute(ins.args, vars, escapeChar).trim() || null;
        break;
      case "RUN":
        stage.runSteps.push([ins.args, ...ins.heredocs].join("\n"));
        break;
      case "COPY":
      case "ADD": {
        const copy = copyOf(ins, stage.workdir, { ...opts, escapeChar, vars, warnings, problems });
        if (copy) stage.copies.push(copy);
        break;
      }
      default:
        if (!IGNORED.has(ins.keyword)) {
          problems.push(`${at(ins.line)}: unknown Dockerfile instruction ${ins.keyword}`);
        }
    }
  }
  const last = stages[stages.length - 1];
  if (!last)
    problems.push(
      `${opts.path}: has no FROM line; start it with FROM <image>, e.g. FROM debian:bookworm-slim`,
    );
  const spec: DockerfileSpec = {
    path: opts.path,
    baseImage: last?.baseImage ?? null,
    copies: last?.copies ?? [],
    env: last?.env ?? {},
    workdir: last?.workdir ?? null,
    user: last?.user ?? null,
    runSteps: last?.runSteps ?? [],
  };
  return { spec, warnings, problems };
}

function fromStage(
  ins: Instruction,
  stages: Stage[],
  globalArgs: Record<string, string>,
  escapeChar: string,
): Stage {
  const parts = words(ins.args, globalArgs, escapeChar).filter((w) => !w.startsWith("--"));
  const image = parts[0] ?? "";
  const name = parts[1]?.toUpperCase() === "AS" ? (parts[2] ?? null) : null;
  // A stage built FROM an earlier stage inherits what that stage set up.
  const parent = stages.find((s) => s.name !== null && s.name.toLowerCase() === image.toLowerCase());
  if (parent) {
    return {
      ...structuredClone(parent),
      name,
      args: {},
    };
  }
  return { name, baseImage: image, env: {}, args: {}, workdir: null, user: null, copies: [], runSteps: [] };
}

function declareArgs(
  ins: Instruction,
  into: Record<string, string>,
  vars: Record<string, string>,
  globalArgs: Record<string, string>,
  escapeChar: string,
): void {
  for (const word of words(ins.args, { ...vars, ...into }, escapeChar)) {
    const eq = word.indexOf("=");
    const name = eq === -1 ? word : word.slice(0, eq);
    // `ARG NAME` inside a stage brings in the global value declared before FROM.
    if (eq !== -1) into[name] = word.slice(eq + 1);
    else if (globalArgs[name] !== undefined) into[name] = globalArgs[name];
    else into[name] ??= "";
  }
}

function envPairs(args: string, vars: Record<string, string>, escapeChar: string): Record<string, string> {
  const first = /^(\S+)/.exec(args)?.[1] ?? "";
  const out: Record<string, string> = {};
  if (!first.includes("=")) {
    // Legacy `ENV key value with spaces`.
    const rest = args.slice(first.length).trim();
    out[first] = words(rest, vars, escapeChar).join(" ");
    return out;
  }
  for (const word of words(args, vars, escapeChar)) {
    const eq = word.indexOf("=");
    if (eq > 0) {
      const value = word.slice(eq + 1);
      out[word.slice(0, eq)] = value;
      // Later pairs on the same line see the earlier ones, as Docker does.
      vars = { ...vars, [word.slice(0, eq)]: value };
    }
  }
  return out;
}
