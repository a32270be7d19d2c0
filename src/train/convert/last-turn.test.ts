// Which call is a rollout's row in rollout mode: the agent's last turn, the last call that offers the
// agent's tools. A tool-less side call after the work (Kilo Code titles its session last) is not it;
// a rollout whose calls offer no tools at all keeps its last call.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Exchange } from "../../jobs-dir/exchange.js";
import { rowCandidates } from "./subagents.js";

const call = (index: number, tools: boolean): Exchange => ({
  index,
  request: {
    body: {
      messages: [{ role: "user", content: `turn ${index}` }],
      ...(tools ? { tools: [{ type: "function", function: { name: "bash" } }] } : {}),
    },
  },
  response: { body: {} },
  metadata: {},
});
const pick = (calls: Exchange[], rowMode: "rollout" | "exchange" = "rollout") =>
  rowCandidates(calls, null, { rowMode, subagentRows: false, primary: () => true }).calls.map((c) => c.index);

describe("rollout rows: the agent's last turn", () => {
  it("skips a tool-less call made after the last tool-offering one", () => {
    assert.deepEqual(pick([call(0, true), call(1, true), call(2, false)]), [1]);
  });
  it("keeps the last call when no call offers tools", () => {
    assert.deepEqual(pick([call(0, false), call(1, false)]), [1]);
  });
  it("exchange mode keeps every call", () => {
    assert.deepEqual(pick([call(0, true), call(1, false)], "exchange"), [0, 1]);
  });
});
