// Trajectory lines with spliced bodies: one line each, and the same JSON as serializing the whole.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LineBuilder, oneLine } from "./line.js";

describe("LineBuilder", () => {
  it("splices held texts wherever they sit and yields the JSON of the whole, on one line", () => {
    const request = { model: "m", messages: [{ role: "user", content: 'quote " and \\ and é\u2028' }] };
    const answer = { id: "x", choices: [{ message: { content: "fine" } }], usage: null };
    const line = new LineBuilder();
    const value = {
      request: { body: line.hold(JSON.stringify(request)), note: "held texts are not strings" },
      response: { status_code: 200, body: line.hold(JSON.stringify(answer)) },
      metadata: { upstream_request: { body: line.hold("[1,2,3]") }, after: true },
    };
    const text = line.build(value);
    assert.ok(text.endsWith("\n"));
    assert.equal(text.indexOf("\n"), text.length - 1);
    assert.deepEqual(JSON.parse(text), {
      request: { body: request, note: "held texts are not strings" },
      response: { status_code: 200, body: answer },
      metadata: { upstream_request: { body: [1, 2, 3] }, after: true },
    });
  });

  it("leaves a line without held texts as plain JSON", () => {
    assert.equal(new LineBuilder().build({ a: [1, "b"] }), '{"a":[1,"b"]}\n');
  });

  it("takes a request text that fits on one line, trimmed, and refuses one that spans lines", () => {
    assert.equal(oneLine('  {"a":1}\t'), '{"a":1}');
    assert.equal(oneLine('{"a":1}\n'), '{"a":1}');
    assert.equal(oneLine('{\n  "a": 1\n}'), null);
    assert.equal(oneLine('{"a":\r1}'), null);
  });
});
