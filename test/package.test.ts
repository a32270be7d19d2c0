// What `npm pack` publishes: built from a copy of the package's inputs (so the build and its source
// maps are exactly what `prepare` makes), then listed by npm itself. A test helper in the tarball is
// dead weight a user can import by mistake; a source map naming a file the tarball lacks sends a
// debugger or `--enable-source-maps` to nothing; a README link to a file the tarball lacks is a
// dead link on npm. Then the tarball is installed in an empty project and used as the docs show
// (test/testing/installed-app.ts).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { REPO, tempDir } from "./testing/bench.js";
import { type InstalledApp, installApp } from "./testing/installed-app.js";

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
let tarball: string;

before(async () => {
  root = await tempDir("pack");
  const pkg = JSON.parse(await fs.readFile(path.join(REPO, "package.json"), "utf8")) as { files: string[] };
  // The inputs of the build and of the listing: what package.json ships, plus the sources and configs.
  const configs = ["package.json", "tsconfig.json", "tsconfig.build.json", "scripts/copy-runtime-files.mjs"];
  const inputs = new Set([...pkg.files.filter((f) => f !== "dist"), "src", ...configs]);
  for (const entry of inputs) {
    await fs.mkdir(path.dirname(path.join(root, entry)), { recursive: true });
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
  const packed = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", root], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  tarball = path.join(root, (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename ?? "");
});

after(async () => {
  if (root) await fs.rm(root, { recursive: true, force: true });
});

describe("the npm package", () => {
  test("ships the library, the command, its license, schemas, docs and examples", () => {
    for (const entry of [
      "package.json",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cli/main.js",
      "esm-only.cjs",
      "LICENSE",
      "README.md",
      "schemas/trial-result.schema.json",
      "docs/run-a-benchmark.md",
      "examples/tasks/half-life/task.toml",
      "examples/policies/half-life-one-wrong.json",
    ]) {
      assert.ok(files.includes(entry), `${entry} missing from the tarball`);
    }
  });

  test("every file a shipped module runs or reads by its own path is in the tarball", async () => {
    // `new URL("./x", import.meta.url)`: a helper the code starts with node (the trusted relay's
    // forwarder) that tsc does not emit; missing, every run from the package fails at its first relay.
    const wanted: string[] = [];
    for (const js of files.filter((f) => f.startsWith("dist/") && f.endsWith(".js"))) {
      const text = await fs.readFile(path.join(root, js), "utf8");
      for (const m of text.matchAll(/new URL\("(\.{1,2}\/[^"]+)", import\.meta\.url\)/g))
        wanted.push(path.posix.normalize(path.posix.join(path.posix.dirname(js), m[1] as string)));
    }
    assert.ok(wanted.includes("dist/sandbox/trusted-forwarder.cjs"), `found: ${wanted.join(", ")}`);
    const shipped = new Set(files);
    // A folder (the package root, for a path computed from it) is not a file to ship.
    const missing = wanted.filter((f) => !f.endsWith("/") && !shipped.has(f));
    assert.deepEqual(missing, [], "files the code opens by path, missing from the tarball");
  });

  test("the license is the Apache License 2.0 that package.json names", async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(root, "package.json"), "utf8")) as { license: string };
    assert.equal(pkg.license, "Apache-2.0");
    const text = await fs.readFile(path.join(root, "LICENSE"), "utf8");
    assert.match(text, /Apache License\s+Version 2\.0, January 2004/);
    assert.match(text, /END OF TERMS AND CONDITIONS/);
  });

  test("npm run build leaves the bench command executable", async () => {
    const { mode } = await fs.stat(path.join(root, "dist/cli/main.js"));
    assert.equal(mode & 0o111, 0o111, `dist/cli/main.js has mode ${(mode & 0o777).toString(8)}`);
  });

  test("every relative link of a shipped page names a file in the tarball", async () => {
    const shipped = new Set(files);
    const dead: string[] = [];
    for (const page of files.filter((f) => f.endsWith(".md"))) {
      const text = await fs.readFile(path.join(root, page), "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
        const file = path.posix.normalize(
          path.posix.join(path.posix.dirname(page), target.split("#")[0] ?? ""),
        );
        if (!shipped.has(file) && !files.some((f) => f.startsWith(`${file.replace(/\/$/, "")}/`)))
          dead.push(`${page} -> ${target}`);
      }
    }
    assert.deepEqual(dead, []);
  });

  test("holds no test, test helper or fixture", () => {
    // Under examples/, tests/test.sh is a task's verifier: part of the example, not of our tests.
    const offending = files.filter(
      (f) =>
        !f.startsWith("examples/") &&
        (/(^|\/)(testing|fixtures)\//.test(f) ||
          /\.test\./.test(path.basename(f)) ||
          // Helper names used before the testing/ folders: testing.ts, testing-wire.ts, testkit.ts,
          // test-helpers.ts. No module of the product is named so.
          /^test/.test(path.basename(f))),
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

describe("the tarball, installed in an empty project", () => {
  let app: InstalledApp;
  before(async () => {
    app = await installApp(tarball, path.join(root, "app"));
  });

  test("a typed script runs an Evaluation, loads the job, converts it and validates the rows", async () => {
    const out = await app.typedScript();
    assert.equal(out.exitCode, 0);
    assert.equal(out.trials, 4);
    // half-life-one-wrong.json gets one of half-life's three checks wrong in every rollout.
    assert.deepEqual(out.rewards, [0.6667, 0.6667, 0.6667, 0.6667]);
    assert.equal(out.rows, 4);
    assert.equal(out.valid, true);
    assert.equal(out.advantages, 4);
  });

  test("every TypeScript example of the shipped README and docs typechecks against the shipped types", async () => {
    const { blocks, errors } = await app.typecheckDocs();
    assert.ok(blocks >= 6, `only ${blocks} ts block(s) found`);
    assert.equal(errors, "");
  });

  test("import.meta.resolve finds the JSON Schemas under benchflow/schemas/", async () => {
    const out = await app.node(
      'const u = import.meta.resolve("benchflow/schemas/train-prime-sft-row.schema.json"); const fs = await import("node:fs"); console.log(u, JSON.parse(fs.readFileSync(new URL(u), "utf8")).title);',
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /node_modules\/benchflow\/schemas\/train-prime-sft-row\.schema\.json benchflow prime-sft row/,
    );
  });

  test('require("benchflow") says the package is ESM-only and how to load it', async () => {
    const out = await app.node('require("benchflow")', "commonjs");
    assert.notEqual(out.code, 0);
    assert.match(
      out.stderr,
      /benchflow is ESM-only: use `import \{ Evaluation \} from "benchflow"`, or `await import\("benchflow"\)` from CommonJS/,
    );
  });

  test("npx bench runs the installed command", async () => {
    const out = await app.bench(["--version"]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim(), "0.1.0");
  });
});
