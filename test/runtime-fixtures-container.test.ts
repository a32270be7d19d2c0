// The network and workdir fixtures in the container sandbox: oracle 1.0, nop 0.0, on
// whichever engine DOCKER_HOST names (else the default socket); CI runs it on Podman and on Docker.
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { useScratch } from "./testing/bench.js";
import { RUNTIME_FIXTURES, scoresOracleAndNop } from "./testing/runtime-fixtures.js";

const scratch = useScratch("runtime-ct");

describe("runtime fixtures, container sandbox", () => {
  for (const task of RUNTIME_FIXTURES) {
    it(`${task}: oracle 1.0, nop 0.0`, async (t) => {
      if (!(await engineOrSkip(t))) return;
      await scoresOracleAndNop(task, "container", scratch());
    });
  }
});
