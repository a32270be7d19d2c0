import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { UserInputError } from "../errors.js";
import { loadTask } from "./load.js";
import { MINIMAL_SPLIT_TASK, removeRoot, tempRoot, writeTask } from "./testing/task-dir.js";

describe("[verifier] environment_mode", () => {
  let root: string;
  let n = 0;
  before(async () => {
    root = await tempRoot();
  });
  after(() => removeRoot(root));

  const load = (toml: string, extra: Record<string, string> = {}) =>
    writeTask(root, `t${n++}`, { ...MINIMAL_SPLIT_TASK, "task.toml": toml, ...extra }).then(loadTask);

  async function refused(toml: string, ...fragments: string[]): Promise<void> {
    await assert.rejects(load(toml), (err: unknown) => {
      assert.ok(err instanceof UserInputError, String(err));
      for (const f of fragments)
        assert.ok(err.message.includes(f), `lacks ${JSON.stringify(f)}: ${err.message}`);
      return true;
    });
  }

  it("reads Harbor's key and upstream's spelling; absent is absent (shared), with no warning", async () => {
    const plain = await load("[verifier]\ntimeout_sec = 5\n");
    assert.equal(plain.config.verifier.environmentMode, undefined);
    const harbor = await load('[verifier]\nenvironment_mode = "separate"\n');
    assert.equal(harbor.config.verifier.environmentMode, "separate");
    assert.deepEqual(harbor.warnings, []);
    const upstream = await load('[verifier]\nsandbox_mode = "shared"\n');
    assert.equal(upstream.config.verifier.environmentMode, "shared");
    assert.deepEqual(upstream.warnings, []);
  });

  it("refuses an unknown value, naming the file, the field and the values", async () => {
    await refused(
      '[verifier]\nenvironment_mode = "isolated"\n',
      "task.toml: verifier.environment_mode",
      '"isolated" is not known',
      '"separate"',
    );
  });

  it("refuses both spellings at once", async () => {
    await refused(
      '[verifier]\nenvironment_mode = "separate"\nsandbox_mode = "separate"\n',
      "verifier.sandbox_mode and verifier.environment_mode are both set",
    );
  });

  it('refuses [verifier.environment] with "shared" as Harbor does, and on its own as not supported yet', async () => {
    await refused(
      '[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 2\n',
      'verifier.environment contradicts verifier.environment_mode = "shared"',
      'set environment_mode = "separate"',
    );
    await refused(
      '[verifier]\nenvironment_mode = "separate"\n[verifier.environment]\ncpus = 2\n',
      "[verifier.environment] (an image of its own for the verifier) is not supported yet",
    );
    await refused("[verifier.environment]\ncpus = 2\n", "[verifier.environment]", "not supported yet");
  });

  it("holds a multi-step task's mode for every step: a step may repeat it, not change it", async () => {
    const step = {
      "steps/one/instruction.md": "Do it.\n",
      "steps/one/tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
    };
    const write = (toml: string) =>
      writeTask(root, `t${n++}`, { ...MINIMAL_SPLIT_TASK, ...step, "task.toml": toml }).then(loadTask);
    const task = await write(
      '[verifier]\nenvironment_mode = "separate"\n[[steps]]\nname = "one"\n[steps.verifier]\nenvironment_mode = "separate"\n',
    );
    assert.equal(task.config.verifier.environmentMode, "separate");
    assert.deepEqual(
      task.warnings.filter((w) => w.includes("environment_mode")),
      [],
    );
    await assert.rejects(
      write('[[steps]]\nname = "one"\n[steps.verifier]\nenvironment_mode = "separate"\n'),
      /task\.toml: steps\[0\]\.verifier\.environment_mode = "separate" differs from the task's \("shared"\).*set environment_mode once, in \[verifier\]/,
    );
    await assert.rejects(
      write(
        '[verifier]\nenvironment_mode = "separate"\n[[steps]]\nname = "one"\n[steps.verifier.environment]\ncpus = 1\n',
      ),
      /\[steps\.verifier\.environment\] of steps\[0\] \(an image of its own for the step's verifier\) is not supported yet/,
    );
  });
});
