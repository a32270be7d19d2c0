// A sandbox's warnings reach the run's one-per-message warn: host-wide ones must read the same for
// every task (else a run of N tasks says the same thing N times), task ones must name their task.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Sandbox } from "../sandbox/types.js";
import { sayWarnings } from "./types.js";

function said(taskNames: string[], sandboxOf: (task: string) => Partial<Sandbox>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  // As the evaluation's warn does: each message once per run.
  const warn = (m: string) => {
    if (!seen.has(m)) out.push(m);
    seen.add(m);
  };
  for (const name of taskNames) sayWarnings({ task: { name } as never, warn }, sandboxOf(name) as Sandbox);
  return out;
}

describe("a sandbox's warnings, said through the run", () => {
  it("a host warning once for all tasks; a task's own warning once per task, with its name", () => {
    const host = "storage_mb is watched, not enforced: podman cannot cap a container's disk here";
    const out = said(["a", "b", "c"], (task) => ({
      warnings: [host, `compose.yaml: services.${task}.ports is not applied`],
      hostWarnings: [host],
    }));
    assert.deepEqual(out, [
      host,
      "task a: compose.yaml: services.a.ports is not applied",
      "task b: compose.yaml: services.b.ports is not applied",
      "task c: compose.yaml: services.c.ports is not applied",
    ]);
  });

  it("a sandbox that marks none names the task on each", () => {
    assert.deepEqual(
      said(["a"], () => ({ warnings: ["x"] })),
      ["task a: x"],
    );
  });
});
