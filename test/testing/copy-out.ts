// What a rollout copies out of a sandbox, checked the same way on both sandboxes: the hostile-logs
// fixture's rollout (sparse files, links out, a fifo, a forged record), and a download past a small
// budget.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Sandbox } from "../../src/sandbox/types.js";
import { bench, FIXTURES, rollouts } from "./bench.js";

interface Cut {
  path: string;
  reason: string;
  size?: number;
  kept_bytes?: number;
}

async function cutsIn(record: string): Promise<Record<string, string>> {
  const records = JSON.parse(await fs.readFile(record, "utf8")) as { cut: Cut[] }[];
  return Object.fromEntries(records.flatMap((r) => r.cut.map((c) => [c.path, c.reason])));
}

/** Every symlink under dir: relative, and resolving inside `root`. */
async function assertNoLinkEscapes(dir: string, root: string): Promise<void> {
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isSymbolicLink()) {
      const target = await fs.readlink(full);
      assert.ok(!target.startsWith("/"), `${full} -> ${target} is absolute`);
      const real = await fs.realpath(full).catch(() => path.resolve(dir, target));
      assert.ok(real.startsWith(`${root}/`), `${full} -> ${target} resolves to ${real}, outside ${root}`);
    } else if (e.isDirectory()) await assertNoLinkEscapes(full, root);
    else assert.ok(e.isFile(), `${full} is neither a file, a folder nor a link`);
  }
}

async function assertSparse(file: string, mib: number): Promise<void> {
  const st = await fs.stat(file);
  assert.equal(st.size, mib * 1024 ** 2, `${file} keeps its apparent size`);
  assert.ok(
    st.blocks * 512 <= 256 * 1024,
    `${file}: ${mib} MiB of holes took ${st.blocks * 512} bytes on the host`,
  );
}

/** The oracle of hostile-logs through `bench run`: scored 1.0, and every copy out bounded and inside. */
export async function hostileLogsRollout(sandbox: "namespace" | "container", jobsDir: string): Promise<void> {
  const run = await bench([
    "run",
    path.join(FIXTURES, "hostile-logs"),
    "-a",
    "oracle",
    "--sandbox",
    sandbox,
    "--jobs-dir",
    jobsDir,
  ]);
  const [found] = await rollouts(jobsDir);
  assert.ok(found, `no rollout: ${run.stdout}${run.stderr}`);
  assert.equal(found.result?.rewards?.reward, 1, `${run.stdout}${run.stderr}`);
  assert.equal(run.code, 0, run.stderr);
  const dir = await fs.realpath(found.dir);
  for (const [logs, mib] of [
    ["agent", 1024],
    ["artifacts", 64],
  ] as const) {
    const copy = path.join(dir, logs);
    await assertSparse(path.join(copy, "sparse.bin"), mib);
    const mid = Buffer.alloc(6);
    const fh = await fs.open(path.join(copy, "sparse.bin"));
    await fh.read(mid, 0, 6, mib * 512 * 1024);
    await fh.close();
    assert.equal(mid.toString(), "middle", "the data inside the sparse file came out");
    assert.equal(await fs.readlink(path.join(copy, "ok-link")), "notes.txt");
    assert.equal(await fs.readFile(path.join(copy, "ok-link"), "utf8"), "notes\n");
    for (const gone of ["passwd-link", "escape-link", "chain-link", "fifo"]) {
      await assert.rejects(fs.lstat(path.join(copy, gone)), `${logs}/${gone} came out`);
    }
    const cuts = await cutsIn(path.join(copy, ".benchflow-truncated.json"));
    assert.equal(cuts["passwd-link"], "link_escapes");
    assert.equal(cuts["escape-link"], "link_escapes");
    assert.equal(cuts["chain-link"], "link_escapes");
    assert.equal(cuts.fifo, "special_file");
    assert.equal(
      cuts[".benchflow-truncated.json"],
      "reserved_name",
      "the agent's forged record is not the record",
    );
  }
  await assertSparse(path.join(dir, "verifier", "sparse.bin"), 64);
  await assert.rejects(fs.lstat(path.join(dir, "verifier", "passwd-link")));
  assert.equal(
    (await cutsIn(path.join(dir, "verifier", ".benchflow-truncated.json")))["passwd-link"],
    "link_escapes",
  );
  await assertNoLinkEscapes(dir, dir);
}

/** A 3 MiB file and 40 small ones past a 1 MiB budget: cut, left out, recorded; the budget held. */
export async function downloadPastBudget(sandbox: Sandbox, hostDir: string): Promise<void> {
  const r = await sandbox.exec(
    "mkdir -p /logs/agent/many && head -c 3145728 /dev/urandom > /logs/agent/big.bin && " +
      "for i in $(seq 1 40); do echo small > /logs/agent/many/f$i; done",
    { user: "agent" },
  );
  assert.equal(r.exitCode, 0, r.stderr);
  const dest = path.join(hostDir, "agent");
  const budget = 1024 * 1024;
  await sandbox.download("/logs/agent", dest, { maxBytes: budget });
  let onDisk = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.name === ".benchflow-truncated.json") continue;
      if (e.isDirectory()) await walk(full);
      else onDisk += (await fs.lstat(full)).blocks * 512;
    }
  };
  await walk(dest);
  assert.ok(
    onDisk <= budget + 64 * 1024,
    `the copy takes ${onDisk} bytes on the host past a ${budget} budget`,
  );
  const [record] = JSON.parse(await fs.readFile(path.join(dest, ".benchflow-truncated.json"), "utf8"));
  assert.equal(record.source, "/logs/agent");
  assert.equal(record.max_bytes, budget);
  assert.ok(record.bytes_written <= budget);
  const cuts = record.cut as Cut[];
  const kept = await fs
    .readdir(path.join(dest, "many"))
    .then((n) => n.length)
    .catch(() => 0);
  const big = await fs.stat(path.join(dest, "big.bin")).catch(() => null);
  const bigCut = cuts.find((c) => c.path === "big.bin");
  assert.ok(bigCut, `big.bin is not in the record: ${JSON.stringify(cuts)}`);
  if (bigCut.reason === "over_budget") assert.equal(bigCut.kept_bytes, big?.size);
  else assert.equal(bigCut.reason, "budget_spent");
  assert.ok((big?.size ?? 0) < 3 * 1024 * 1024, "big.bin was cut");
  const spent = cuts.filter((c) => c.path.startsWith("many/") && c.reason === "budget_spent").length;
  assert.equal(kept + spent, 40, "each small file came out or is recorded");
}
