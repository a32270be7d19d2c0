// The tar writer and reader against GNU tar: what we write, tar reads; what tar writes, we unpack,
// and an archive cannot place anything outside the destination.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createReadStream, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { extractTo } from "./tar-read.js";
import { entriesOf, tarStream } from "./tar-write.js";

let tmp: string;
const longName = `${"deep/".repeat(30)}file-with-a-long-name.txt`;

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bf-tar-"));
  const src = path.join(tmp, "src");
  await fs.mkdir(path.join(src, "sub"), { recursive: true });
  await fs.writeFile(path.join(src, "a.txt"), "alpha\n");
  await fs.writeFile(path.join(src, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  await fs.writeFile(path.join(src, "sub", "empty"), "");
  await fs.writeFile(path.join(src, "sub", "big.bin"), Buffer.alloc(70_000, 7));
  await fs.mkdir(path.dirname(path.join(src, longName)), { recursive: true });
  await fs.writeFile(path.join(src, longName), "long\n");
  await fs.symlink("a.txt", path.join(src, "link"));
});

after(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function writeArchive(file: string, stream: Readable): Promise<void> {
  await fs.writeFile(file, stream);
}

describe("tar writer", () => {
  it("writes an archive GNU tar extracts, with contents, modes, long names and symlinks", async () => {
    const archive = path.join(tmp, "ours.tar");
    await writeArchive(archive, tarStream(await entriesOf(path.join(tmp, "src"), "/solution")));
    const out = path.join(tmp, "gnu-out");
    await fs.mkdir(out);
    execFileSync("tar", ["-xf", archive, "-C", out]);
    assert.equal(await fs.readFile(path.join(out, "solution", "a.txt"), "utf8"), "alpha\n");
    assert.equal((await fs.stat(path.join(out, "solution", "run.sh"))).mode & 0o777, 0o755);
    assert.equal((await fs.readFile(path.join(out, "solution", "sub", "big.bin"))).length, 70_000);
    assert.equal(await fs.readFile(path.join(out, "solution", longName), "utf8"), "long\n");
    assert.equal(await fs.readlink(path.join(out, "solution", "link")), "a.txt");
    const listing = execFileSync("tar", ["-tvf", archive], { encoding: "utf8" });
    assert.match(listing, /root\/root/);
  });

  it("names a single file by the destination path", async () => {
    const entries = await entriesOf(path.join(tmp, "src", "a.txt"), "/etc/x/config.txt");
    assert.deepEqual(
      entries.map((e) => e.name),
      ["etc/x/config.txt"],
    );
  });
});

describe("tar reader", () => {
  it("unpacks a folder archive so its top folder becomes the destination", async () => {
    const archive = path.join(tmp, "gnu.tar");
    execFileSync("tar", ["-cf", archive, "-C", tmp, "src"]);
    const dest = path.join(tmp, "ours-out", "verifier");
    await extractTo(createReadStream(archive), dest);
    assert.equal(await fs.readFile(path.join(dest, "a.txt"), "utf8"), "alpha\n");
    assert.equal((await fs.stat(path.join(dest, "run.sh"))).mode & 0o777, 0o755);
    assert.deepEqual(await fs.readFile(path.join(dest, "sub", "big.bin")), Buffer.alloc(70_000, 7));
    assert.equal(await fs.readFile(path.join(dest, longName), "utf8"), "long\n");
    assert.equal(await fs.readlink(path.join(dest, "link")), "a.txt");
  });

  it("unpacks a single-file archive to the destination file", async () => {
    const archive = path.join(tmp, "one.tar");
    execFileSync("tar", ["-cf", archive, "-C", path.join(tmp, "src"), "a.txt"]);
    const dest = path.join(tmp, "single", "copy.txt");
    await fs.mkdir(path.dirname(dest), { recursive: true });
    await extractTo(createReadStream(archive), dest);
    assert.equal(await fs.readFile(dest, "utf8"), "alpha\n");
  });

  it("refuses entries that climb out of the destination and writes no file through a symlink", async () => {
    const evil = path.join(tmp, "evil");
    await fs.mkdir(path.join(evil, "top"), { recursive: true });
    const outside = path.join(tmp, "outside");
    await fs.mkdir(outside);
    const archive = tarStream([
      { name: "top", type: "dir", mode: 0o755 },
      { name: "top/escape", type: "symlink", mode: 0o777, linkname: outside },
      { name: "top/escape/pwned.txt", type: "file", mode: 0o644, data: Buffer.from("x") },
      { name: "top/../../climbed.txt", type: "file", mode: 0o644, data: Buffer.from("x") },
      { name: "top/ok.txt", type: "file", mode: 0o644, data: Buffer.from("fine") },
    ]);
    const dest = path.join(tmp, "evil-out");
    await extractTo(archive, dest);
    assert.equal(await fs.readFile(path.join(dest, "ok.txt"), "utf8"), "fine");
    assert.deepEqual(await fs.readdir(outside), []);
    await assert.rejects(fs.access(path.join(tmp, "climbed.txt")));
    assert.equal(await fs.readlink(path.join(dest, "escape")), outside);
  });
});
