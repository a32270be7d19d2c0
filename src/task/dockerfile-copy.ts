// COPY/ADD of a Dockerfile resolved against the build context: flags, JSON form, globs, and the
// destination relative to the current WORKDIR. What only an image build can do is skipped with a warning.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { type Instruction, substitute, words } from "./dockerfile-lexer.js";
import { hasGlob, matchesGlob } from "./glob.js";
import type { DockerfileCopy } from "./types.js";

export interface CopyContext {
  path: string;
  contextDir: string;
  escapeChar: string;
  vars: Record<string, string>;
  warnings: string[];
  problems: string[];
}

export function copyOf(ins: Instruction, workdir: string | null, ctx: CopyContext): DockerfileCopy | null {
  const where = `${ctx.path}:${ins.line}`;
  const flags: Record<string, string> = {};
  let rest = ins.args;
  for (let m = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(rest); m; m = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(rest)) {
    flags[m[1] as string] = m[2] ?? "";
    rest = rest.slice(m[0].length);
  }
  if (flags.from !== undefined) {
    ctx.warnings.push(
      `${where}: ${ins.keyword} --from=${flags.from} needs an image build; the namespace sandbox skips it`,
    );
    return null;
  }
  let parts: string[];
  if (rest.startsWith("[")) {
    try {
      const list: unknown = JSON.parse(rest);
      if (!Array.isArray(list) || !list.every((p) => typeof p === "string")) throw new Error("not strings");
      parts = list.map((p: string) => substitute(p, ctx.vars, ctx.escapeChar));
    } catch {
      ctx.problems.push(
        `${where}: ${ins.keyword} JSON form must be a list of strings, e.g. ["src", "/dest/"]`,
      );
      return null;
    }
  } else parts = words(rest, ctx.vars, ctx.escapeChar);
  if (parts.length < 2) {
    ctx.problems.push(`${where}: ${ins.keyword} needs at least one source and a destination`);
    return null;
  }
  const rawDest = parts[parts.length - 1] as string;
  const rawSources = parts.slice(0, -1);
  if (rawSources.some((s) => s.startsWith("<<"))) {
    ctx.warnings.push(
      `${where}: ${ins.keyword} from a heredoc needs an image build; the namespace sandbox skips it`,
    );
    return null;
  }
  if (ins.keyword === "ADD" && rawSources.some((s) => /^(https?|git):\/\/|^git@/.test(s))) {
    ctx.warnings.push(`${where}: ADD from a URL needs an image build; the namespace sandbox skips it`);
    return null;
  }
  const sources = resolveSources(rawSources, where, ctx);
  if (sources === null) return null;
  const isDir = rawDest.endsWith("/") || /(^|\/)\.\.?$/.test(rawDest);
  if ((rawSources.length > 1 || rawSources.some(hasGlob)) && !isDir) {
    ctx.problems.push(`${where}: ${ins.keyword} with several sources needs a destination folder ending in /`);
    return null;
  }
  if (ins.keyword === "ADD" && sources.some((s) => /\.(tar|tgz|tar\.(gz|bz2|xz))$/.test(s))) {
    ctx.warnings.push(
      `${where}: ADD unpacks archives in an image build; the namespace sandbox copies them as files`,
    );
  }
  const resolved = path.posix.resolve(workdir ?? "/", rawDest);
  const dest = isDir && resolved !== "/" ? `${resolved}/` : resolved;
  return { sources, dest, line: ins.line };
}

function resolveSources(raw: string[], where: string, ctx: CopyContext): string[] | null {
  const out: string[] = [];
  const root = path.resolve(ctx.contextDir);
  for (const source of raw) {
    const abs = path.resolve(root, source.replace(/^\/+/, ""));
    if (abs !== root && !abs.startsWith(root + path.sep)) {
      ctx.problems.push(
        `${where}: COPY source ${source} is outside environment/; keep sources inside the build context`,
      );
      return null;
    }
    const found = hasGlob(source) ? expandGlob(root, path.relative(root, abs)) : existsSync(abs) ? [abs] : [];
    if (found.length === 0) {
      ctx.problems.push(
        `${where}: COPY source ${source} does not exist in ${ctx.contextDir}; add it or fix the path`,
      );
      return null;
    }
    out.push(...found);
  }
  return out;
}

/** Expands a relative glob one path segment at a time. */
function expandGlob(root: string, pattern: string): string[] {
  let matches = [root];
  for (const segment of pattern.split(path.sep)) {
    const next: string[] = [];
    for (const dir of matches) {
      if (!hasGlob(segment)) {
        const p = path.join(dir, segment);
        if (existsSync(p)) next.push(p);
        continue;
      }
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      for (const name of readdirSync(dir).sort()) {
        if (matchesGlob(name, segment)) next.push(path.join(dir, name));
      }
    }
    matches = next;
  }
  return matches;
}
