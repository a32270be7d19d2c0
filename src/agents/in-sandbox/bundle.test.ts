// Agent bundles with a real npm and a local package tarball (no registry needed): installed once,
// atomically, one install per bundle even across processes; a changed recipe reinstalls.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type BundleSpec, bundleDir, ensureBundle } from "./bundle.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
let root: string;
let tarball: string;

before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bundle-"));
  const pkg = path.join(root, "pkg");
  await fs.mkdir(path.join(pkg, "bin"), { recursive: true });
  await fs.mkdir(path.join(pkg, "extra"), { recursive: true });
  await fs.writeFile(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "bf-fake-agent", version: "1.2.3" }),
  );
  await fs.writeFile(path.join(pkg, "bin", "fake"), "#!/bin/sh\necho fake-agent\n", { mode: 0o755 });
  await fs.writeFile(path.join(pkg, "extra", "big.bin"), "x".repeat(1000));
  const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", root], {
    cwd: pkg,
    encoding: "utf8",
  });
  assert.equal(packed.status, 0, packed.stderr);
  tarball = path.join(root, packed.stdout.trim().split("\n").pop() as string);
});
after(() => fs.rm(root, { recursive: true, force: true }));

function spec(name: string, over: Partial<BundleSpec> = {}): BundleSpec {
  return {
    name,
    version: "1.2.3",
    packages: [tarball],
    links: { fake: "node_modules/bf-fake-agent/bin/fake" },
    prune: ["node_modules/bf-fake-agent/extra"],
    ...over,
  };
}

describe("agent bundles", () => {
  it("installs once into <cache>/<name>@<version>, with links and pruning; the next call uses the cache", async () => {
    const cacheDir = path.join(root, "cache1");
    const first = await ensureBundle(spec("one"), { cacheDir });
    assert.equal(first.dir, path.join(cacheDir, "one@1.2.3"));
    assert.equal(first.installedNow, true);
    assert.ok(first.manifest.install_sec > 0);
    const out = spawnSync(path.join(first.dir, "bin", "fake"), { encoding: "utf8" });
    assert.equal(out.stdout, "fake-agent\n");
    assert.equal(
      await fs.stat(path.join(first.dir, "node_modules/bf-fake-agent/extra")).catch(() => null),
      null,
    );
    const again = await ensureBundle(spec("one"), { cacheDir });
    assert.equal(again.installedNow, false);
    assert.equal(again.manifest.installed_at, first.manifest.installed_at);
    assert.deepEqual((await fs.readdir(cacheDir)).sort(), ["one@1.2.3"], "no temp folder or lock is left");
  });

  it("shares one install between concurrent calls in a process", async () => {
    const cacheDir = path.join(root, "cache2");
    const [a, b] = await Promise.all([
      ensureBundle(spec("two"), { cacheDir }),
      ensureBundle(spec("two"), { cacheDir }),
    ]);
    assert.equal(a.manifest.installed_at, b.manifest.installed_at);
  });

  it("installs once when two processes ask at the same time", async () => {
    const cacheDir = path.join(root, "cache3");
    const script = path.join(root, "ask.mts");
    await fs.writeFile(
      script,
      `import { ensureBundle } from ${JSON.stringify(path.join(HERE, "bundle.ts"))};
const b = await ensureBundle(${JSON.stringify(spec("three"))}, { cacheDir: ${JSON.stringify(cacheDir)} });
process.stdout.write(JSON.stringify({ now: b.installedNow, at: b.manifest.installed_at }));`,
    );
    const ask = () =>
      new Promise<{ now: boolean; at: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", script], {
          cwd: path.join(HERE, "../../.."),
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
      });
    const [a, b] = await Promise.all([ask(), ask()]);
    assert.deepEqual([a.now, b.now].sort(), [false, true], "exactly one of them installed");
    assert.equal(a.at, b.at);
  });

  it("takes over the lock of an install whose process died", async () => {
    const cacheDir = path.join(root, "cache4");
    await fs.mkdir(cacheDir, { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    await fs.writeFile(`${bundleDir(spec("four"), cacheDir)}.lock`, dead.stdout);
    await fs.mkdir(`${bundleDir(spec("four"), cacheDir)}.tmp-${dead.stdout}-abcdef/half`, {
      recursive: true,
    });
    const b = await ensureBundle(spec("four"), { cacheDir });
    assert.equal(b.installedNow, true);
    assert.deepEqual(await fs.readdir(cacheDir), ["four@1.2.3"], "the dead install's temp folder is gone");
  });

  it("reinstalls when the recipe changed, and leaves nothing behind when npm fails", async () => {
    const cacheDir = path.join(root, "cache5");
    await ensureBundle(spec("five"), { cacheDir });
    const changed = await ensureBundle(spec("five", { prune: [] }), { cacheDir });
    assert.equal(changed.installedNow, true);
    assert.ok((await fs.stat(path.join(changed.dir, "node_modules/bf-fake-agent/extra"))).isDirectory());
    const broken = spec("six", { packages: [path.join(root, "missing.tgz")] });
    await assert.rejects(ensureBundle(broken, { cacheDir }), /npm install failed/);
    assert.deepEqual((await fs.readdir(cacheDir)).sort(), ["five@1.2.3"]);
  });
});
