// The tar writer and reader against GNU tar: what we write, tar reads; what tar writes, we unpack,
// and an archive cannot place anything outside the destination.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createReadStream, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { CopyOut } from "../../copy-out.js";
import { extractTo } from "./tar-read.js";
import { entriesOf, tarStream } from "./tar-write.js";

let tmp: string;
const budget = (maxBytes = 64 * 1024 * 1024, maxScan?: number) => new CopyOut("/test", maxBytes, maxScan);
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
    await extractTo(createReadStream(archive), dest, budget());
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
    await extractTo(createReadStream(archive), dest, budget());
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
    const out = budget();
    await extractTo(archive, dest, out);
    await out.finish(dest);
    assert.equal(await fs.readFile(path.join(dest, "ok.txt"), "utf8"), "fine");
    assert.deepEqual(await fs.readdir(outside), []);
    await assert.rejects(fs.access(path.join(tmp, "climbed.txt")));
    await assert.rejects(fs.lstat(path.join(dest, "escape")), "an absolute link never comes out");
    const [record] = JSON.parse(await fs.readFile(path.join(dest, ".benchflow-truncated.json"), "utf8"));
    assert.deepEqual(record.cut.map((c: { path: string; reason: string }) => [c.path, c.reason]).sort(), [
      ["escape", "link_escapes"],
      ["top/../../climbed.txt", "unsafe_path"],
      ["top/escape/pwned.txt", "unsafe_path"],
    ]);
  });
});

/** A tar made by Python's tarfile from a list of entries: it writes whatever names and links it is given. */
function pythonTar(file: string, entries: object[]): void {
  const script = `
import io, json, sys, tarfile
entries = json.loads(sys.argv[2])
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as t:
    for e in entries:
        i = tarfile.TarInfo(e["name"])
        i.type = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
                  "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE}[e["type"]]
        i.mode = 0o755 if e["type"] == "dir" else 0o644
        i.linkname = e.get("link", "")
        data = b""
        if "text" in e: data = e["text"].encode()
        if "zeros" in e: data = b"\\0" * e["zeros"] + b"end"
        if "random" in e:
            import random
            data = random.Random(1).randbytes(e["random"])
        i.size = len(data) if e["type"] == "file" else 0
        t.addfile(i, io.BytesIO(data) if e["type"] == "file" else None)
`;
  execFileSync("python3", ["-c", script, file, JSON.stringify(entries)]);
}

const cutsOf = async (dest: string, record = path.join(dest, ".benchflow-truncated.json")) => {
  const records = JSON.parse(await fs.readFile(record, "utf8")) as {
    cut: { path: string; reason: string }[];
  }[];
  return Object.fromEntries(records.flatMap((r) => r.cut.map((c) => [c.path, c.reason])));
};

describe("tar reader against hostile archives", () => {
  it("keeps every entry inside the destination and records each one it leaves out", async () => {
    const outside = path.join(tmp, "hostile-outside");
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, "secret"), "host secret");
    const archive = path.join(tmp, "hostile.tar");
    pythonTar(archive, [
      { name: "top", type: "dir" },
      { name: "top/real.txt", type: "file", text: "real" },
      { name: "/etc/absolute.txt", type: "file", text: "x" },
      { name: "top/../climb.txt", type: "file", text: "x" },
      { name: "top/a/../../climb2.txt", type: "file", text: "x" },
      { name: "top/hard-abs", type: "hardlink", link: path.join(outside, "secret") },
      { name: "top/hard-climb", type: "hardlink", link: "top/../hostile-outside/secret" },
      { name: "top/hard-ok", type: "hardlink", link: "top/real.txt" },
      { name: "top/via", type: "symlink", link: outside },
      { name: "top/via/planted.txt", type: "file", text: "through the link" },
      { name: "top/rel-out", type: "symlink", link: "../../hostile-outside" },
      { name: "top/sub", type: "dir" },
      { name: "top/sub/up", type: "symlink", link: ".." },
      { name: "top/chain", type: "symlink", link: "sub/up/.." },
      { name: "top/ok", type: "symlink", link: "sub/up/real.txt" },
      { name: "top/fifo", type: "fifo" },
      { name: "top/tty", type: "chr" },
      { name: "top/.benchflow-truncated.json", type: "file", text: "[]" },
      { name: "top", type: "file", text: "would replace the destination" },
    ]);
    const dest = path.join(tmp, "hostile-out");
    const out = budget();
    await extractTo(createReadStream(archive), dest, out);
    await out.finish(dest);
    assert.equal(await fs.readFile(path.join(dest, "real.txt"), "utf8"), "real");
    assert.equal(
      await fs.readFile(path.join(dest, "hard-ok"), "utf8"),
      "real",
      "a hard link inside the archive",
    );
    assert.equal(
      (await fs.stat(path.join(dest, "hard-ok"))).ino,
      (await fs.stat(path.join(dest, "real.txt"))).ino,
    );
    assert.equal(await fs.readlink(path.join(dest, "ok")), "sub/up/real.txt");
    assert.equal(await fs.readlink(path.join(dest, "sub", "up")), "..");
    assert.deepEqual((await fs.readdir(dest)).sort(), [
      ".benchflow-truncated.json",
      "hard-ok",
      "ok",
      "real.txt",
      "sub",
    ]);
    assert.deepEqual(await fs.readdir(outside), ["secret"], "nothing was written outside");
    assert.equal(await fs.readFile(path.join(outside, "secret"), "utf8"), "host secret");
    await assert.rejects(fs.access(path.join(tmp, "climb.txt")));
    await assert.rejects(fs.access(path.join(tmp, "climb2.txt")));
    assert.deepEqual(await cutsOf(dest), {
      "etc/absolute.txt": "unsafe_path",
      "top/../climb.txt": "unsafe_path",
      "top/a/../../climb2.txt": "unsafe_path",
      "hard-abs": "hardlink_outside",
      "hard-climb": "hardlink_outside",
      "top/via/planted.txt": "unsafe_path",
      via: "link_escapes",
      "rel-out": "link_escapes",
      chain: "link_escapes",
      fifo: "special_file",
      tty: "special_file",
      ".benchflow-truncated.json": "reserved_name",
      top: "unsafe_path",
    });
  });

  it("writes zeros as holes, keeps the size, and cuts at the budget", async () => {
    const archive = path.join(tmp, "big.tar");
    pythonTar(archive, [
      { name: "logs", type: "dir" },
      { name: "logs/sparse.bin", type: "file", zeros: 64 * 1024 * 1024 },
      { name: "logs/dense.bin", type: "file", random: 3 * 1024 * 1024 },
      { name: "logs/after.txt", type: "file", text: "after" },
    ]);
    const dest = path.join(tmp, "big-out");
    const out = budget(1024 * 1024);
    await extractTo(createReadStream(archive), dest, out);
    await out.finish(dest);
    const sparse = await fs.stat(path.join(dest, "sparse.bin"));
    assert.equal(sparse.size, 64 * 1024 * 1024 + 3, "the apparent size is kept");
    assert.ok(sparse.blocks * 512 <= 64 * 1024, `64 MiB of zeros took ${sparse.blocks * 512} bytes`);
    const tail = Buffer.alloc(3);
    const fh = await fs.open(path.join(dest, "sparse.bin"));
    await fh.read(tail, 0, 3, 64 * 1024 * 1024);
    await fh.close();
    assert.equal(tail.toString(), "end");
    const dense = await fs.stat(path.join(dest, "dense.bin"));
    assert.ok(dense.size < 1024 * 1024, `the dense file was cut (${dense.size} bytes)`);
    assert.ok(out.written <= 1024 * 1024, `wrote ${out.written} bytes past a 1 MiB budget`);
    await assert.rejects(fs.access(path.join(dest, "after.txt")));
    const [record] = JSON.parse(await fs.readFile(path.join(dest, ".benchflow-truncated.json"), "utf8"));
    assert.equal(record.max_bytes, 1024 * 1024);
    const dc = record.cut.find((c: { path: string }) => c.path === "dense.bin");
    assert.deepEqual([dc.reason, dc.size, dc.kept_bytes], ["over_budget", 3 * 1024 * 1024, dense.size]);
    assert.deepEqual(record.cut.find((c: { path: string }) => c.path === "after.txt").reason, "budget_spent");
  });

  it("stops reading a stream past the scan limit, and records it", async () => {
    const archive = path.join(tmp, "endless.tar");
    pythonTar(archive, [
      { name: "logs", type: "dir" },
      { name: "logs/zeros.bin", type: "file", zeros: 32 * 1024 * 1024 },
      { name: "logs/after.txt", type: "file", text: "after" },
    ]);
    const dest = path.join(tmp, "endless-out");
    const stream = createReadStream(archive);
    const out = budget(1024 * 1024, 4 * 1024 * 1024);
    await extractTo(stream, dest, out);
    await out.finish(dest);
    assert.ok(stream.destroyed, "the stream was closed");
    await assert.rejects(fs.access(path.join(dest, "after.txt")));
    assert.ok((await fs.stat(path.join(dest, "zeros.bin"))).size <= 4 * 1024 * 1024);
    const cuts = await cutsOf(dest);
    assert.equal(cuts[""], "scan_limit");
    assert.equal(cuts["zeros.bin"], "scan_limit");
  });
});
