// `bench policy scripted --port` out of range is a flag error naming the flag and the range, not
// Node's RangeError about `options.port`.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { bench, REPO } from "./testing/bench.js";

describe("bench policy scripted --port", () => {
  for (const port of ["99999", "-1"]) {
    it(`refuses ${port} before listening`, async () => {
      const script = path.join(REPO, "examples/policies/hello.json");
      const r = await bench(["policy", "scripted", "--script", script, "--port", port]);
      assert.notEqual(r.code, 0);
      const first = r.stderr.trim().split("\n")[0] ?? "";
      assert.match(first, /--port/);
      assert.match(first, /a port is 0 to 65535/);
      assert.doesNotMatch(r.stderr, /RangeError|options\.port/);
    });
  }
});
