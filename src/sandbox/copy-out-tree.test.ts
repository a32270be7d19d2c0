import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { CopyOut, ENTRY_COST } from "./copy-out.js";
import { copyTreeOut } from "./copy-out-tree.js";

describe("copyTreeOut: a tree out of a sandbox", async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bf-copy-out-"));
  after(() => fs.rm(root, { recursive: true, force: true }));

  const cutsOf = async (record: string) => {
    const [r] = JSON.parse(await fs.readFile(record, "utf8"));
    return Object.fromEntries(r.cut.map((c: { path: string; reason: string }) => [c.path, c.reason]));
  };

  it("keeps holes, drops escaping links and special files, strips setuid, records each", async () => {
    const src = path.join(root, "agent");
    await fs.mkdir(path.join(src, "sub"), { recursive: true });
    await fs.writeFile(path.join(src, "log.txt"), "log");
    await fs.writeFile(path.join(src, "suid"), "x", { mode: 0o4755 });
    await fs.chmod(path.join(src, "suid"), 0o4755);
    // 1 GiB apparent, a few bytes of data in the middle.
    const fh = await fs.open(path.join(src, "sparse.bin"), "w");
    await fh.write("middle", 512 * 1024 * 1024);
    await fh.truncate(1024 ** 3);
    await fh.close();
    await fs.symlink("/etc/passwd", path.join(src, "abs"));
    await fs.symlink("../../outside", path.join(src, "climb"));
    await fs.symlink("..", path.join(src, "sub", "up"));
    await fs.symlink("sub/up/..", path.join(src, "chain"));
    await fs.symlink("sub/up/log.txt", path.join(src, "ok"));
    await fs.writeFile(path.join(src, "sub", "x.benchflow-truncated.json"), "[]");
    execFileSync("mkfifo", [path.join(src, "fifo")]);
    const dest = path.join(root, "agent-out");
    const out = new CopyOut("/logs/agent", 64 * 1024 * 1024);
    await copyTreeOut(src, dest, out);
    await out.finish(dest);
    const sparse = await fs.stat(path.join(dest, "sparse.bin"));
    assert.equal(sparse.size, 1024 ** 3);
    assert.ok(sparse.blocks * 512 <= 64 * 1024, `1 GiB sparse file took ${sparse.blocks * 512} bytes`);
    const mid = Buffer.alloc(6);
    const check = await fs.open(path.join(dest, "sparse.bin"));
    await check.read(mid, 0, 6, 512 * 1024 * 1024);
    await check.close();
    assert.equal(mid.toString(), "middle");
    assert.equal((await fs.stat(path.join(dest, "suid"))).mode & 0o7777, 0o755);
    assert.equal(await fs.readlink(path.join(dest, "ok")), "sub/up/log.txt");
    assert.equal(await fs.readFile(path.join(dest, "ok"), "utf8"), "log");
    assert.deepEqual((await fs.readdir(dest)).sort(), [
      ".benchflow-truncated.json",
      "log.txt",
      "ok",
      "sparse.bin",
      "sub",
      "suid",
    ]);
    assert.deepEqual(await cutsOf(path.join(dest, ".benchflow-truncated.json")), {
      abs: "link_escapes",
      climb: "link_escapes",
      chain: "link_escapes",
      fifo: "special_file",
      "sub/x.benchflow-truncated.json": "reserved_name",
    });
    assert.ok(out.written < 20 * ENTRY_COST, `counted ${out.written} bytes`);
  });

  it("cuts the file where the budget ends and leaves out what follows", async () => {
    const src = path.join(root, "budget");
    await fs.mkdir(path.join(src, "z"), { recursive: true });
    await fs.writeFile(path.join(src, "big.bin"), Buffer.alloc(3 * 1024 * 1024, 7));
    for (let i = 0; i < 50; i++) await fs.writeFile(path.join(src, "z", `f${i}`), "x".repeat(100));
    const dest = path.join(root, "budget-out");
    const budget = 1024 * 1024;
    const out = new CopyOut("/logs/agent", budget);
    await copyTreeOut(src, dest, out);
    const record = await out.finish(dest);
    const big = await fs.stat(path.join(dest, "big.bin"));
    assert.ok(big.size < budget && big.size > budget / 2, `big.bin kept ${big.size} bytes`);
    assert.ok(big.blocks * 512 <= budget + 8192);
    assert.ok(out.written <= budget, `wrote ${out.written} of a ${budget} budget`);
    const cut = record?.cut.find((c) => c.path === "big.bin");
    assert.deepEqual([cut?.reason, cut?.size, cut?.kept_bytes], ["over_budget", 3 * 1024 * 1024, big.size]);
    const kept = await fs.readdir(path.join(dest, "z"));
    const spent = record?.cut.filter((c) => c.reason === "budget_spent").length ?? 0;
    assert.equal(kept.length + spent, 50, "every small file either came out or is recorded");
  });

  it("writes a file of written zeros as holes, and stops reading at the scan limit", async () => {
    const src = path.join(root, "zeros");
    await fs.mkdir(src);
    await fs.writeFile(path.join(src, "zeros.bin"), Buffer.alloc(8 * 1024 * 1024));
    await fs.writeFile(
      path.join(src, "tail.bin"),
      Buffer.concat([Buffer.alloc(8 * 1024 * 1024), Buffer.from("x")]),
    );
    const dest = path.join(root, "zeros-out");
    await fs.mkdir(dest);
    const out = new CopyOut("/logs/agent", 1024 * 1024, 12 * 1024 * 1024);
    await copyTreeOut(path.join(src, "zeros.bin"), path.join(dest, "zeros.bin"), out);
    const zeros = await fs.stat(path.join(dest, "zeros.bin"));
    assert.equal(zeros.size, 8 * 1024 * 1024);
    assert.ok(zeros.blocks * 512 <= 64 * 1024, `8 MiB of zeros took ${zeros.blocks * 512} bytes`);
    await copyTreeOut(path.join(src, "tail.bin"), path.join(dest, "tail.bin"), out);
    const record = await out.finish(path.join(dest, "tail.bin"));
    const cut = record?.cut[0];
    assert.equal(cut?.reason, "scan_limit");
    assert.equal((await fs.stat(path.join(dest, "tail.bin"))).size, cut?.kept_bytes);
    assert.ok((cut?.kept_bytes ?? 0) <= 8 * 1024 * 1024, "the copy stopped before the end");
  });

  it("puts a copied file's record after its name, and keeps an earlier record", async () => {
    const file = path.join(root, "one-big.bin");
    await fs.writeFile(file, Buffer.alloc(10_000, 1));
    const dest = path.join(root, "one-out.bin");
    for (const n of [3 * ENTRY_COST, 2 * ENTRY_COST]) {
      const out = new CopyOut("/logs/agent/one-big.bin", n);
      await copyTreeOut(file, dest, out);
      await out.finish(dest);
    }
    const records = JSON.parse(await fs.readFile(`${dest}.benchflow-truncated.json`, "utf8"));
    assert.deepEqual(
      records.map((r: { max_bytes: number }) => r.max_bytes),
      [3 * ENTRY_COST, 2 * ENTRY_COST],
    );
    assert.equal(
      (await fs.stat(dest)).size,
      ENTRY_COST,
      "the second copy replaced the first, cut at its budget",
    );
  });
});
