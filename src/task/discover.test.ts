import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { UserInputError } from "../errors.js";
import { discoverTasks } from "./discover.js";
import { globToRegExp } from "./glob.js";
import { MINIMAL_SPLIT_TASK, removeRoot, tempRoot, writeTask } from "./testing/task-dir.js";

describe("globToRegExp", () => {
  it("supports *, ?, [abc], [!abc] and escapes the rest", () => {
    assert.ok(globToRegExp("a-*").test("a-one"));
    assert.ok(!globToRegExp("a-*").test("b-one"));
    assert.ok(globToRegExp("?-one").test("a-one"));
    assert.ok(!globToRegExp("?-one").test("ab-one"));
    assert.ok(globToRegExp("[ab]-*").test("b-x"));
    assert.ok(!globToRegExp("[!ab]-*").test("b-x"));
    assert.ok(globToRegExp("[a-c]x").test("bx"));
    assert.ok(globToRegExp("v1.0+").test("v1.0+"));
    assert.ok(!globToRegExp("v1.0").test("v1x0"));
  });
});

describe("discoverTasks", () => {
  let root: string;
  let tasks: string;
  before(async () => {
    root = await tempRoot();
    tasks = path.join(root, "tasks");
    for (const name of ["b-three", "a-two", "a-one"]) await writeTask(tasks, name, MINIMAL_SPLIT_TASK);
    await writeTask(tasks, "c-native", { "task.md": "---\nname: c\n---\nGo.\n" });
    await writeTask(tasks, "not-a-task", { "notes.md": "hello" });
    await fs.writeFile(path.join(tasks, "README.md"), "a file, not a task");
  });
  after(() => removeRoot(root));

  const names = (dirs: string[]) => dirs.map((d) => path.basename(d));

  it("returns every task subfolder sorted by name, as absolute paths", async () => {
    const found = await discoverTasks(tasks);
    assert.deepEqual(names(found), ["a-one", "a-two", "b-three", "c-native"]);
    assert.ok(found.every((d) => path.isAbsolute(d)));
  });

  it("returns the path itself when it is a task", async () => {
    assert.deepEqual(await discoverTasks(path.join(tasks, "a-two")), [path.join(tasks, "a-two")]);
  });

  it("filters by exact names and globs", async () => {
    assert.deepEqual(names(await discoverTasks(tasks, { include: ["a-*"] })), ["a-one", "a-two"]);
    assert.deepEqual(names(await discoverTasks(tasks, { include: ["b-three", "?-one"] })), [
      "a-one",
      "b-three",
    ]);
    assert.deepEqual(names(await discoverTasks(tasks, { exclude: ["*-two", "c-*"] })), ["a-one", "b-three"]);
    assert.deepEqual(names(await discoverTasks(tasks, { include: ["[ab]-*"], exclude: ["a-one"] })), [
      "a-two",
      "b-three",
    ]);
    // A filter that selects nothing is refused, naming the pattern and what is there; called from
    // code, the option is named as the library spells it (cli-noops.test.ts has the command's flag).
    await assert.rejects(
      discoverTasks(tasks, { include: ["zzz"] }),
      /(?<!-)include zzz matches none of the 4 task\(s\)/,
    );
    await assert.rejects(
      discoverTasks(tasks, { include: ["a-*", "zzz"] }),
      /(?<!-)include zzz matches none/,
      "one unmatched pattern among others is a typo too",
    );
    await assert.rejects(discoverTasks(tasks, { exclude: ["*"] }), /leave none of the 4 task\(s\)/);
  });

  it("refuses a missing path and a folder that holds no task", async () => {
    await assert.rejects(discoverTasks(path.join(root, "missing")), (err: unknown) => {
      assert.ok(err instanceof UserInputError);
      assert.equal(
        err.message,
        `tasks path ${path.join(root, "missing")} does not exist; give a task folder or a folder of tasks`,
      );
      return true;
    });
    await assert.rejects(
      discoverTasks(path.join(tasks, "not-a-task")),
      /holds no task: a task folder needs task\.md/,
    );
  });

  it("warns about tasks that hold symlinks", async () => {
    const linked = await writeTask(root, "linked/t", MINIMAL_SPLIT_TASK);
    await fs.symlink("instruction.md", path.join(linked, "alias.md"));
    const warnings: string[] = [];
    assert.deepEqual(await discoverTasks(linked, { onWarning: (w) => warnings.push(w) }), [linked]);
    assert.deepEqual(warnings, ["task t contains symlinks, which sandbox uploads skip: alias.md"]);
  });
});
