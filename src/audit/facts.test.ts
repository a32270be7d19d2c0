import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadTask } from "../task/load.js";
import { agentScript, EXPLOITS, exploitsFor } from "./exploits.js";
import { readFacts } from "./facts.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const fixture = (rel: string) => path.join(REPO, "test/fixtures", rel);

async function factsOf(rel: string) {
  return readFacts(await loadTask(fixture(rel)));
}

const names = (f: Awaited<ReturnType<typeof factsOf>>) => exploitsFor(f).map((e) => e.name);

describe("audit facts and the exploits they select", () => {
  it("a pytest verifier that copies its tests into the workspace gets every test-runner exploit", async () => {
    const f = await factsOf("audit-hardening/weak-pytest-copied");
    assert.equal(f.workspace, "/app");
    assert.ok(f.usesPytest && f.usesPython && f.copiesTestsIntoWorkspace);
    for (const e of ["conftest", "pytest-config", "pytest-plugin", "python-shadow", "tests-folder-link"])
      assert.ok(names(f).includes(e), `${e} in ${names(f)}`);
    // Its tests' own copy in the workspace is not a deliverable.
    assert.deepEqual(f.workspaceFiles, ["/app/answer.txt"]);
  });

  it("a shell verifier with no Python, pytest, PATH or tests in the workspace gets only the generic ones", async () => {
    const f = await factsOf("audit/weak-exists");
    assert.deepEqual(names(f), ["reward-file", "format-empty", "format-zero"]);
  });

  it("reads the deliverables, the JSON keys, the image's PATH and the tests it ships into the workspace", async () => {
    const json = await factsOf("audit/weak-json");
    assert.deepEqual(json.workspaceFiles, ["/app/stats.json"]);
    assert.ok(json.quotedKeys.includes("total") && json.quotedKeys.includes("count"));
    assert.ok(names(json).includes("format-json-nulls"));
    const p = await factsOf("audit-hardening/weak-path");
    assert.ok(p.setsPath && names(p).includes("path-stub"));
    const shipped = await factsOf("audit/weak-tests-in-workspace");
    assert.deepEqual(shipped.workspaceTests, ["/app/tests/test_answer.py"]);
    assert.ok(names(shipped).includes("tests-edit"));
    const program = await factsOf("audit/weak-program");
    assert.ok(names(program).includes("program-stub"));
    const sound = await factsOf("audit/sound");
    assert.equal(sound.expectedFile, "expected.txt");
    assert.ok(names(sound).includes("expected-link"));
  });

  it("every exploit's script is bash that parses, on every fixture it applies to", async () => {
    const { execFileSync } = await import("node:child_process");
    for (const rel of [
      "audit-hardening/weak-pytest-copied",
      "audit/weak-json",
      "audit/sound",
      "audit/weak-program",
    ]) {
      const f = await factsOf(rel);
      for (const e of exploitsFor(f)) execFileSync("bash", ["-n"], { input: agentScript(e, f) });
    }
    assert.equal(new Set(EXPLOITS.map((e) => e.name)).size, EXPLOITS.length, "exploit names are unique");
  });
});
