import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normaliseConfig } from "./config.js";

describe("[verifier.hardening]", () => {
  it("reads cleanup_conftests and restore_build_files, and leaves it absent when the task says nothing", () => {
    const off = normaliseConfig({ verifier: { hardening: { cleanup_conftests: false } } }, "t/task.toml");
    assert.deepEqual(off.problems, []);
    assert.deepEqual(off.config.verifier.hardening, { cleanupConftests: false, restoreBuildFiles: true });
    const kept = normaliseConfig({ verifier: { hardening: { restore_build_files: false } } }, "t/task.toml");
    assert.deepEqual(kept.config.verifier.hardening, { cleanupConftests: true, restoreBuildFiles: false });
    assert.equal(normaliseConfig({}, "t/task.toml").config.verifier.hardening, undefined);
  });

  it("refuses a value that is not a boolean, naming the field and the fix", () => {
    const r = normaliseConfig({ verifier: { hardening: { cleanup_conftests: "no" } } }, "t/task.toml");
    assert.equal(r.problems.length, 1);
    assert.match(
      r.problems[0] ?? "",
      /verifier\.hardening\.cleanup_conftests.*"no" is not a boolean.*cleanup_conftests = false/,
    );
    const bad = normaliseConfig({ verifier: { hardening: { restore_build_files: 0 } } }, "t/task.toml");
    assert.match(
      bad.problems[0] ?? "",
      /verifier\.hardening\.restore_build_files.*restore_build_files = false/,
    );
  });
});
