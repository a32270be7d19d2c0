import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { listTaskFiles, taskDigest } from "./digest.js";
import { removeRoot, tempRoot, writeTask } from "./testing/task-dir.js";

// Upstream's definition, written out in Python (hashlib) as an independent implementation.
const PYTHON_DIGEST = `
import hashlib, os, sys
root = sys.argv[1]
rels = []
for base, dirs, files in os.walk(root):
    for name in dirs + files:
        full = os.path.join(base, name)
        if os.path.isfile(full) and not os.path.islink(full):
            rels.append(os.path.relpath(full, root).replace(os.sep, "/"))
h = hashlib.sha256()
for rel in sorted(rels):
    if rel == ".benchflow-source.json":
        continue
    h.update(rel.encode("utf-8") + b"\\x00" + hashlib.sha256(open(os.path.join(root, rel), "rb").read()).digest())
print("sha256:" + h.hexdigest())
`;

function hasPython(): boolean {
  try {
    execFileSync("python3", ["-c", "pass"]);
    return true;
  } catch {
    return false;
  }
}

describe("taskDigest", () => {
  let root: string;
  let task: string;
  before(async () => {
    root = await tempRoot();
    task = await writeTask(root, "task", {
      "task.toml": "[verifier]\ntimeout_sec = 5\n",
      "instruction.md": "Say hi.\n",
      "environment/Dockerfile": "FROM debian:bookworm-slim\n",
      "environment/data/é-ünïcode.csv": "a,b\n1,2\n",
      "environment/a-b": "sorted before a/ by code point",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "empty.txt": "",
      ".benchflow-source.json": '{"source": "ignored"}',
    });
    await fs.symlink("instruction.md", path.join(task, "link.md"));
    await fs.writeFile(path.join(task, "binary.bin"), Buffer.from([0, 255, 1, 254]));
  });
  after(() => removeRoot(root));

  it("matches a hand-built buffer of path + NUL + sha256(bytes) in code-point order", async () => {
    const { files, symlinks } = await listTaskFiles(task);
    assert.deepEqual(symlinks, ["link.md"]);
    assert.ok(files.indexOf("environment/a-b") < files.indexOf("environment/data/é-ünïcode.csv"));
    const outer = createHash("sha256");
    for (const rel of [
      "binary.bin",
      "empty.txt",
      "environment/Dockerfile",
      "environment/a-b",
      "environment/data/é-ünïcode.csv",
      "instruction.md",
      "task.toml",
      "tests/test.sh",
    ]) {
      const bytes = await fs.readFile(path.join(task, rel));
      outer.update(
        Buffer.concat([
          Buffer.from(rel, "utf8"),
          Buffer.from([0]),
          createHash("sha256").update(bytes).digest(),
        ]),
      );
    }
    assert.equal(await taskDigest(task), `sha256:${outer.digest("hex")}`);
  });

  it("matches Python's hashlib computation, for the task and for environment/ alone", {
    skip: !hasPython(),
  }, async () => {
    for (const dir of [task, path.join(task, "environment")]) {
      const expected = execFileSync("python3", ["-c", PYTHON_DIGEST, dir], { encoding: "utf8" }).trim();
      assert.equal(await taskDigest(dir), expected);
    }
  });

  it("changes with content, not with modes, symlinks or the source marker", async () => {
    const before = await taskDigest(task);
    await fs.chmod(path.join(task, "tests/test.sh"), 0o755);
    await fs.symlink("task.toml", path.join(task, "another-link"));
    await fs.writeFile(path.join(task, ".benchflow-source.json"), '{"source": "changed"}');
    assert.equal(await taskDigest(task), before);
    await fs.appendFile(path.join(task, "instruction.md"), "More.\n");
    assert.notEqual(await taskDigest(task), before);
  });
});
