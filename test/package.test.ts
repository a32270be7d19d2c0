// What `npm pack` publishes: built from a copy of the package's inputs (so the build and its source
// maps are exactly what `prepare` makes), then listed by npm itself. A test helper in the tarball is
// dead weight a user can import by mistake; a source map naming a file the tarball lacks sends a
// debugger or `--enable-source-maps` to nothing.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { REPO, tempDir } from "./testing/bench.js";

const run = promisify(execFile);

interface PackListing {
  files: { path: string }[];
}

interface SourceMap {
  sourceRoot?: string;
  sources: string[];
  sourcesContent?: (string | null)[];
}

let root: string;
let files: string[];

before(async () => {
  root = await tempDir("pack");
  const pkg = JSON.parse(await fs.readFile(path.join(REPO, "package.json"), "utf8")) as { files: string[] };
  // The inputs of the build and of the listing: what package.json ships, plus the sources and configs.
  const configs = ["package.json", "tsconfig.json", "tsconfig.build.json"];
  const inputs = new Set([...pkg.files.filter((f) => f !== "dist"), "src", ...configs]);
  for (const entry of inputs) {
    await fs.cp(path.join(REPO, entry), path.join(root, entry), { recursive: true });
  }
  await fs.symlink(path.join(REPO, "node_modules"), path.join(root, "node_modules"));
  // An output left by an older layout: tsc never deletes what it no longer emits, so the build must.
  await fs.mkdir(path.join(root, "dist/sandbox/container"), { recursive: true });
  await fs.writeFile(path.join(root, "dist/sandbox/container/test-helpers.js"), "export {};\n");
  await run("npm", ["run", "build"], { cwd: root });
  // --ignore-scripts: `prepare` is `npm run build`, which just ran.
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  const listing = JSON.parse(stdout) as PackListing[];
  files = listing.flatMap((p) => p.files.map((f) => f.path));
});

after(async () => {
  if (root) await fs.rm(root, { recursive: true, force: true });
});

describe("the npm package", () => {
  test("ships the library and the command", () => {
    for (const entry of ["package.json", "dist/index.js", "dist/index.d.ts", "dist/cli/main.js"]) {
      assert.ok(files.includes(entry), `${entry} missing from the tarball`);
    }
  });

  test("holds no test, test helper or fixture", () => {
    const offending = files.filter(
      (f) =>
        /(^|\/)(testing|fixtures)\//.test(f) ||
        /\.test\./.test(path.basename(f)) ||
        // Helper names used before the testing/ folders: testing.ts, testing-wire.ts, testkit.ts,
        // test-helpers.ts. No module of the product is named so.
        /^test/.test(path.basename(f)),
    );
    assert.deepEqual(offending, []);
  });

  test("every source map embeds its sources or names only files in the tarball", async () => {
    const shipped = new Set(files);
    const maps = files.filter((f) => f.endsWith(".map"));
    const dangling: string[] = [];
    for (const map of maps) {
      const parsed = JSON.parse(await fs.readFile(path.join(root, map), "utf8")) as SourceMap;
      parsed.sources.forEach((source, i) => {
        if (typeof parsed.sourcesContent?.[i] === "string") return;
        const target = path.posix.normalize(
          path.posix.join(path.posix.dirname(map), parsed.sourceRoot ?? "", source),
        );
        if (!shipped.has(target)) dangling.push(`${map} -> ${source}`);
      });
    }
    assert.deepEqual(dangling.slice(0, 5), [], `${dangling.length} source(s) neither embedded nor shipped`);
  });

  test("every sourceMappingURL names a map in the tarball", async () => {
    const shipped = new Set(files);
    const dangling: string[] = [];
    for (const file of files.filter((f) => /\.(m?js|d\.ts)$/.test(f))) {
      const text = await fs.readFile(path.join(root, file), "utf8");
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1];
      if (!url || url.startsWith("data:")) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), url));
      if (!shipped.has(target)) dangling.push(`${file} -> ${url}`);
    }
    assert.deepEqual(dangling, []);
  });
});
