import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { copyTree } from "./copy-tree.js";

describe("copyTree", async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bf-copy-"));
  after(() => fs.rm(root, { recursive: true, force: true }));

  it("copies nested folders and files with their modes, merging into an existing folder", async () => {
    const src = path.join(root, "src");
    await fs.mkdir(path.join(src, "a/b"), { recursive: true });
    await fs.writeFile(path.join(src, "a/b/run.sh"), "#!/bin/sh\n", { mode: 0o750 });
    await fs.writeFile(path.join(src, "top.txt"), "top");
    await fs.chmod(path.join(src, "a"), 0o700);
    const dest = path.join(root, "dest");
    await fs.mkdir(dest);
    await fs.writeFile(path.join(dest, "keep.txt"), "kept");
    await fs.writeFile(path.join(dest, "top.txt"), "old");
    await copyTree(src, dest);
    assert.equal(await fs.readFile(path.join(dest, "a/b/run.sh"), "utf8"), "#!/bin/sh\n");
    assert.equal((await fs.stat(path.join(dest, "a/b/run.sh"))).mode & 0o777, 0o750);
    assert.equal((await fs.stat(path.join(dest, "a"))).mode & 0o777, 0o700);
    assert.equal(await fs.readFile(path.join(dest, "top.txt"), "utf8"), "top", "files are overwritten");
    assert.equal(await fs.readFile(path.join(dest, "keep.txt"), "utf8"), "kept", "folders are merged");
  });

  it("copies symlinks as they are when nothing bounds the copy (the host's own files)", async () => {
    const src = path.join(root, "links");
    await fs.mkdir(src);
    await fs.symlink("/etc/passwd", path.join(src, "outside"));
    const dest = path.join(root, "links-out");
    await copyTree(src, dest);
    assert.equal(await fs.readlink(path.join(dest, "outside")), "/etc/passwd");
  });

  it("copies a single file", async () => {
    const file = path.join(root, "one.txt");
    await fs.writeFile(file, "one");
    await copyTree(file, path.join(root, "one-copy.txt"));
    assert.equal(await fs.readFile(path.join(root, "one-copy.txt"), "utf8"), "one");
  });
});
