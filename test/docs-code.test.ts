// Every TypeScript block of README.md and docs/ compiles against the library as it is: a field, an
// option or an export the docs name that the code no longer has fails here (test/docs.test.ts runs
// the shell blocks). Each block is its own module importing "benchflow", as a user's file would.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";

const REPO = path.join(import.meta.dirname, "..");

/** Names a block uses without defining them: the reader's own (a trainer to hand records to). */
const PRELUDE = "declare const trainer: { add(record: unknown): void };\n";

async function blocks(): Promise<Array<{ where: string; code: string }>> {
  const pages = [
    "README.md",
    ...(await fs.readdir(path.join(REPO, "docs"))).map((f) => path.join("docs", f)),
  ];
  const out: Array<{ where: string; code: string }> = [];
  for (const page of pages.filter((p) => p.endsWith(".md"))) {
    const lines = (await fs.readFile(path.join(REPO, page), "utf8")).split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] !== "```ts") continue;
      const end = lines.indexOf("```", i + 1);
      out.push({ where: `${page}:${i + 1}`, code: lines.slice(i + 1, end).join("\n") });
      i = end;
    }
  }
  return out;
}

describe("the docs' TypeScript", () => {
  it("every block compiles against the library", async () => {
    const found = await blocks();
    assert.ok(found.length >= 5, `expected the docs' code blocks, found ${found.length}`);
    const files = new Map(found.map((b, i) => [path.join(REPO, `docs-block-${i}.ts`), b]));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      baseUrl: REPO,
      paths: { benchflow: ["src/index.ts"] },
      allowImportingTsExtensions: false,
    };
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    host.readFile = (f) => {
      const block = files.get(f);
      return block ? `${PRELUDE}${block.code}\nexport {};\n` : read(f);
    };
    host.fileExists = (
      (exists) => (f: string) =>
        files.has(f) || exists(f)
    )(host.fileExists.bind(host));
    const program = ts.createProgram([...files.keys()], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.has(d.file.fileName))
      .map((d) => {
        const block = files.get(d.file?.fileName ?? "");
        const line = d.file?.getLineAndCharacterOfPosition(d.start ?? 0).line ?? 0;
        return `${block?.where} (+${line}): ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
      });
    assert.deepEqual(problems, []);
  });
});
