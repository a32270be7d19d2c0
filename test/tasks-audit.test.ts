// `bench tasks audit` through the real command and real sandboxes: each deliberately weak verifier
// of test/fixtures/audit/ is flagged by the exploit of its kind, the sound one by none; the weak
// verifiers the hardening covers (test/fixtures/audit-hardening/) are held with it on and flagged
// with it off (so the exploits are real); bad input exits 2. One container case on Podman.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { AuditReport } from "../src/audit/report.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, REPO } from "./testing/bench.js";

const AUDIT = path.join(REPO, "test/fixtures/audit");
const HARDENING = path.join(REPO, "test/fixtures/audit-hardening");

function acceptedByTask(report: AuditReport): Record<string, string[]> {
  return Object.fromEntries(report.tasks.map((t) => [t.task, t.accepted]));
}

async function auditJson(args: string[], env?: Record<string, string>) {
  const run = await bench(["tasks", "audit", ...args, "--json", "-j", "4"], env ? { env } : {});
  return { run, report: AuditReport.parse(JSON.parse(run.stdout)) };
}

describe("bench tasks audit, namespace sandbox", () => {
  it("flags each weak verifier by its kind, not the sound one, and exits 1", async () => {
    const { run, report } = await auditJson([AUDIT, "--sandbox", "namespace"]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(report.sandbox, "namespace");
    assert.deepEqual(acceptedByTask(report), {
      sound: [],
      "weak-exists": ["format-empty", "format-zero"],
      "weak-json": ["format-json-nulls"],
      "weak-program": ["program-stub", "format-empty"],
      "weak-reward-file": ["reward-file"],
      "weak-tests-in-workspace": ["tests-edit"],
    });
    // Every nop was scored 0: an exploit above it is a hole, not a crash of the verifier.
    for (const t of report.tasks) assert.equal(t.nop_reward, 0, `${t.task}: nop ${t.nop_error}`);
    const sound = report.tasks.find((x) => x.task === "sound");
    assert.ok((sound?.exploits.length ?? 0) >= 5, "the sound verifier met the Python and format exploits");
    assert.equal(report.accepted, 7);
  });

  it("the hardening holds the weak verifiers it covers (exit 0, text) and they are flagged with it off", async (t) => {
    // The namespace sandbox runs the host's pytest (.ci/run installs python3-pytest).
    if (
      !(await fs.access("/usr/bin/pytest-3").then(
        () => true,
        () => false,
      ))
    )
      return t.skip("needs pytest on the host: apt-get install -y python3-pytest");
    const held = await bench([
      "tasks",
      "audit",
      HARDENING,
      path.join(AUDIT, "sound"),
      "--sandbox",
      "namespace",
      "-q",
    ]);
    assert.equal(held.code, 0, held.stdout + held.stderr);
    assert.match(held.stdout, /^weak-path: no exploit accepted \(nop 0, \d+ ran\)$/m);
    assert.match(held.stdout, /^weak-pytest-copied: no exploit accepted/m);
    assert.match(
      held.stdout,
      /^3 task\(s\) audited in the namespace sandbox: 0 exploit\(s\) accepted in 0 task\(s\)$/m,
    );

    const { run, report } = await auditJson([
      HARDENING,
      "--sandbox",
      "namespace",
      "--verifier-hardening",
      "off",
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(report.verifier_hardening, "off");
    assert.deepEqual(acceptedByTask(report), {
      "weak-path": ["path-stub"],
      "weak-pytest-copied": [
        "conftest",
        "pytest-config",
        "pytest-plugin",
        "python-shadow",
        "tests-folder-link",
      ],
    });
  });

  it("bad input exits 2 and names the path and the fix", async () => {
    const missing = await bench(["tasks", "audit", path.join(REPO, "no-such-task")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no-such-task does not exist; give a task folder or a folder of tasks/);
    const broken = await bench(["tasks", "audit", path.join(REPO, "test/fixtures/tasks/bad-toml")]);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /bad-toml\/task\.toml:\d+:\d+: malformed TOML.*fix/);
  });
});

describe("bench tasks audit, container sandbox", () => {
  it("flags a weak verifier on the container engine too", async (t) => {
    if (!(await engineOrSkip(t as unknown as TestContext))) return;
    const { run, report } = await auditJson([path.join(AUDIT, "weak-exists"), "--sandbox", "container"]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(report.sandbox, "container");
    assert.deepEqual(acceptedByTask(report), { "weak-exists": ["format-empty", "format-zero"] });
  });
});
