// The shape of the source, held: the rules src/README.md states, checked on every file the package
// ships (src/ less tests, testing/ helpers and fixtures). Each would fail on the code it replaced:
// the cli <-> view import cycle, flags spelled across the library, process.env read in 12 folders,
// nine functions of over 100 lines.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { OPTION_FLAGS } from "../src/cli/option-flags.js";
import { LIBRARY_ENV } from "../src/env.js";

const SRC = path.join(import.meta.dirname, "..", "src");

interface SourceFile {
  /** Below src/, `/`-separated. */
  rel: string;
  text: string;
  /** Shipped: not a test, not a testing/ helper, not a fixture. */
  shipped: boolean;
}

async function sources(dir = SRC): Promise<SourceFile[]> {
  const out: SourceFile[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "fixtures") out.push(...(await sources(p)));
    } else if (e.name.endsWith(".ts")) {
      const rel = path.relative(SRC, p).split(path.sep).join("/");
      const shipped = !rel.endsWith(".test.ts") && !rel.split("/").includes("testing");
      out.push({ rel, text: await fs.readFile(p, "utf8"), shipped });
    }
  }
  return out;
}

/** Every relative import of a file (`import type` and `export ... from` included), as a path below src/. */
function importsOf(f: SourceFile): string[] {
  const out: string[] = [];
  const info = ts.preProcessFile(f.text, true, true);
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith(".")) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(f.rel), ref.fileName));
    out.push(target.replace(/\.js$/, ".ts"));
  }
  return out;
}

/** The cycles of a graph (its strongly connected components of more than one node), Tarjan's way. */
function cyclesOf(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

function addEdge(edges: Map<string, Set<string>>, from: string, to: string): void {
  if (!edges.has(from)) edges.set(from, new Set());
  edges.get(from)?.add(to);
  if (!edges.has(to)) edges.set(to, new Set());
}

/** A file's folder below src/; a file at src/'s top is a node of its own. */
const folderOf = (rel: string) => (rel.includes("/") ? path.posix.dirname(rel) : rel);

/** String literals and template texts of a file: what a message is made of (comments left out). */
function literalsOf(f: SourceFile): string[] {
  const out: string[] = [];
  const walk = (node: ts.Node): void => {
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    )
      out.push(node.text);
    ts.forEachChild(node, walk);
  };
  walk(ts.createSourceFile(f.rel, f.text, ts.ScriptTarget.Latest, true));
  return out;
}

describe("the source's shape (src/README.md)", () => {
  it("no import cycle between shipped files, type-only imports included", async () => {
    const edges = new Map<string, Set<string>>();
    for (const f of (await sources()).filter((s) => s.shipped))
      for (const t of importsOf(f)) addEdge(edges, f.rel, t);
    assert.deepEqual(cyclesOf(edges), []);
  });

  it("no import cycle between folders: a folder uses its own children and the files of the folders above it", async () => {
    const edges = new Map<string, Set<string>>();
    for (const f of (await sources()).filter((s) => s.shipped)) {
      const from = folderOf(f.rel);
      for (const t of importsOf(f)) {
        const to = folderOf(t);
        // The interface a folder implements lives above it (sandbox/types.ts for sandbox/namespace/).
        if (to === from || from.startsWith(`${to}/`)) continue;
        addEdge(edges, from, to);
      }
    }
    assert.deepEqual(cyclesOf(edges), []);
    // And at the top: each folder of src/ (and each file there) one node, whatever the depth.
    const top = new Map<string, Set<string>>();
    for (const [from, tos] of edges)
      for (const to of tos) {
        const a = from.split("/")[0] as string;
        const b = to.split("/")[0] as string;
        if (a !== b) addEdge(top, a, b);
      }
    assert.deepEqual(cyclesOf(top), []);
  });

  it("nothing below the command imports it: src/cli/ is imported only from src/cli/", async () => {
    const reaching: string[] = [];
    for (const f of await sources()) {
      if (f.rel.startsWith("cli/") || f.rel.endsWith(".test.ts")) continue;
      for (const t of importsOf(f)) if (t.startsWith("cli/")) reaching.push(`${f.rel} -> ${t}`);
    }
    assert.deepEqual(reaching, []);
  });

  it("the environment is read in src/cli/ and src/env.ts only (the library's contract)", async () => {
    const readers = (await sources())
      .filter((f) => f.shipped && !f.rel.startsWith("cli/") && f.rel !== "env.ts")
      .filter((f) => /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*["'`]env/.test(f.text))
      .map((f) => f.rel);
    assert.deepEqual(readers, []);
  });

  it("src/README.md lists every variable of the library's contract, and only those", async () => {
    const readme = await fs.readFile(path.join(SRC, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## The environment"));
    const listed = new Set([...section.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]));
    assert.deepEqual([...listed].sort(), Object.keys(LIBRARY_ENV).sort());
  });

  it("no message outside src/cli/ spells one of the command's flags", async () => {
    const all = await sources();
    // The command's flags: every one its source spells (options, tables, help) and its option table.
    const flags = new Set<string>(
      Object.values(OPTION_FLAGS).flatMap((f) => f.match(/--[a-z][a-z0-9-]+/g) ?? []),
    );
    for (const f of all.filter((s) => s.rel.startsWith("cli/") && s.shipped))
      for (const text of literalsOf(f))
        for (const m of text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]+/g)) flags.add(m[0]);
    assert.ok(
      flags.has("--trials") && flags.has("--agent-timeout-multiplier") && flags.size > 80,
      `the command's flags were not found (${flags.size})`,
    );
    const spelled: string[] = [];
    // The published schemas (src/schemas/, their descriptions) document the files the command writes
    // and say which of its flags fills a field: documentation of the command, not a library message.
    for (const f of all.filter(
      (s) => s.shipped && !s.rel.startsWith("cli/") && !s.rel.startsWith("schemas/"),
    ))
      for (const text of literalsOf(f)) {
        // A message is prose (words with spaces); another program's argv element is one word.
        if (!/\s/.test(text)) continue;
        for (const m of text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]+/g))
          if (flags.has(m[0])) spelled.push(`${f.rel}: ${m[0]} in "${text.slice(0, 80)}"`);
        // The short ones with what follows them on the command (`-a oracle`, `-m vllm/x`, `-j 4`):
        // another program's `-m` or `-j` (useradd, iptables) is followed by something else.
        for (const m of text.matchAll(/(?<![\w-])(?:-a [a-z]|-m [\w.-]+\/|-j \d)/g))
          spelled.push(`${f.rel}: ${m[0]} in "${text.slice(0, 80)}"`);
      }
    assert.deepEqual(spelled, []);
  });

  it("no shipped function is over 100 lines", async () => {
    const long: string[] = [];
    for (const f of (await sources()).filter((s) => s.shipped)) {
      const sf = ts.createSourceFile(f.rel, f.text, ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isFunctionLike(n) && "body" in n && n.body) {
          const lines =
            sf.getLineAndCharacterOfPosition(n.getEnd()).line -
            sf.getLineAndCharacterOfPosition(n.getStart(sf)).line +
            1;
          if (lines > 100)
            long.push(
              `${f.rel}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} (${lines} lines)`,
            );
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    assert.deepEqual(long, []);
  });
});
