// Copies out of the namespace sandbox are bounded: a trial's hostile logs, and a download past a
// small budget.
import path from "node:path";
import { describe, it } from "node:test";
import { createNamespaceBackend } from "../src/sandbox/namespace/backend.js";
import { makeSpec, makeTask } from "../src/sandbox/namespace/testing/kit.js";
import { useScratch } from "./testing/bench.js";
import { downloadPastBudget, hostileLogsRollout } from "./testing/copy-out.js";

const scratch = useScratch("copy-out-ns");

describe("copies out of the namespace sandbox", () => {
  it("a trial's sparse files stay sparse, links to host files and fifos stay behind, recorded", () =>
    hostileLogsRollout("namespace", path.join(scratch(), "jobs")));

  it("a download stops at its budget and records the cut", async () => {
    const sandbox = await createNamespaceBackend().create(
      makeSpec(makeTask({ dir: path.join(scratch(), "task") })),
    );
    try {
      await downloadPastBudget(sandbox, path.join(scratch(), "budget"));
    } finally {
      await sandbox.stop();
    }
  });
});
