// A --jobs-dir (or --out) that cannot be a folder is bad input: one line, exit 2, at once. Under
// /proc, Node's recursive mkdir retried for ever at full CPU and ignored SIGTERM; a file was
// reported as EEXIST. The kill below only keeps a hang from stalling the suite.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { EXAMPLES, startBench, tempDir } from "./testing/bench.js";

const HANG_GUARD_MS = 120_000;

function benchBounded(args: string[]): Promise<{ code: number | null; stderr: string; killed: boolean }> {
  const child = startBench(args);
  let stderr = "";
  let killed = false;
  child.stderr?.on("data", (d) => (stderr += d));
  const guard = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, HANG_GUARD_MS);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stderr, killed });
    }),
  );
}

const run = (jobsDir: string) =>
  benchBounded([
    "run",
    path.join(EXAMPLES, "hello"),
    "-a",
    "oracle",
    "--sandbox",
    "namespace",
    "--jobs-dir",
    jobsDir,
  ]);

describe("--jobs-dir that cannot be a folder", () => {
  let root: string;
  let file: string;
  before(async () => {
    root = await tempDir("jobsdir");
    file = path.join(root, "a-file");
    await fs.writeFile(file, "x");
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it("a path under /proc fails with one line instead of looping", async () => {
    const r = await run("/proc/nope/jobs");
    assert.equal(r.killed, false, "bench hung on /proc/nope/jobs");
    assert.equal(r.code, 2);
    assert.match(
      r.stderr.trim(),
      /^bench: cannot write to --jobs-dir \/proc\/nope\/jobs \(ENOENT at \/proc\/nope\)/,
    );
    assert.equal(r.stderr.trim().split("\n").length, 1);
  });

  it("a file is 'not a folder', not EEXIST", async () => {
    const r = await run(file);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr.trim(),
      `bench: --jobs-dir ${file}: not a folder; pass a folder, or a path where one can be made`,
    );
  });

  it("bench train convert --out under /proc fails with one line", async () => {
    const jobs = path.join(root, "jobs");
    const first = await run(jobs);
    assert.equal(first.code, 0, first.stderr);
    const r = await benchBounded(["train", "convert", jobs, "--out", "/proc/nope/rows.jsonl"]);
    assert.equal(r.killed, false, "bench hung on /proc/nope");
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr.trim(),
      /^bench train convert: --out \/proc\/nope\/rows\.jsonl: cannot make \/proc\/nope \(ENOENT\)/,
    );
  });
});
