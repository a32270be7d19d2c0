// The network and workdir fixtures in the namespace sandbox: oracle 1.0, nop 0.0.
import { describe, it } from "node:test";
import { useScratch } from "./testing/bench.js";
import { RUNTIME_FIXTURES, scoresOracleAndNop } from "./testing/runtime-fixtures.js";

const scratch = useScratch("runtime-ns");

describe("runtime fixtures, namespace sandbox", () => {
  for (const task of RUNTIME_FIXTURES) {
    it(`${task}: oracle 1.0, nop 0.0`, () => scoresOracleAndNop(task, "namespace", scratch()));
  }
});
