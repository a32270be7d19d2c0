import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forksOf, messageKey } from "./tree.js";

const leaf = (keys: string, reward: number) => ({ keys: keys.split(""), reward });

describe("branch tree: forks of a group's conversations", () => {
  it("finds each place the conversations part, with the mean reward below as its value", () => {
    // a: s u L a X 1   b: s u L a Y 2   c: s u P 3   d: s u L c 4
    const forks = forksOf([leaf("suLaX1", 1), leaf("suLaY2", 0), leaf("suP3", 0), leaf("suLc4", 1)]);
    assert.deepEqual(
      forks.map((f) => [f.prefixLength, f.members, f.parts, f.parent, f.depth]),
      [
        [2, [0, 1, 2, 3], [[0, 1, 3], [2]], null, 0],
        [3, [0, 1, 3], [[0, 1], [3]], 0, 1],
        [4, [0, 1], [[0], [1]], 1, 2],
      ],
    );
    assert.deepEqual(
      forks.map((f) => f.value),
      [0.5, 2 / 3, 0.5],
    );
    // sample std (ddof 1) of 1,0,0,1 is sqrt(1/3); over sqrt(4)
    assert.ok(Math.abs((forks[0]?.valueStderr ?? 0) - Math.sqrt(1 / 3) / 2) < 1e-12);
  });

  it("a conversation that stops where another goes on is a part of its own", () => {
    const forks = forksOf([leaf("suA", 1), leaf("suAB", 0)]);
    assert.deepEqual(
      forks.map((f) => [f.prefixLength, f.parts]),
      [[3, [[0], [1]]]],
    );
  });

  it("no fork: one rollout, or conversations that never part", () => {
    assert.deepEqual(forksOf([leaf("suA", 1)]), []);
    assert.deepEqual(forksOf([leaf("suA", 1), leaf("suA", 0)]), []);
  });

  it("messages compare without their tool-call ids, arguments as values", () => {
    const call = (id: string, args: string) => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "bash", arguments: args } }],
    });
    assert.equal(
      messageKey(call("call_a", '{"command": "ls"}')),
      messageKey(call("toolu_b", '{"command":"ls"}')),
    );
    assert.notEqual(messageKey(call("c", '{"command": "ls"}')), messageKey(call("c", '{"command": "pwd"}')));
    assert.equal(
      messageKey({ role: "tool", tool_call_id: "call_a", content: "x" }),
      messageKey({ role: "tool", tool_call_id: "toolu_b", content: "x" }),
    );
  });
});
