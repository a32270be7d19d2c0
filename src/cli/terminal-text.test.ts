import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RolloutResult } from "../schemas/result.js";
import { rolloutLine } from "./format.js";
import { isControl, printable } from "./terminal-text.js";

describe("task-controlled text on the terminal", () => {
  it("shows escape sequences and control characters instead of obeying them", () => {
    // Erase the line, move the cursor up, and write a false verdict in green.
    const attack = "0 of 3 pass\r\x1b[2K\x1b[1A\x1b[32mtrial-01  reward 1.0\x1b[0m\u202e";
    const shown = printable(attack);
    assert.equal(shown, "0 of 3 pass\\x0d\\x1b[2K\\x1b[1A\\x1b[32mtrial-01  reward 1.0\\x1b[0m\\u202e");
    assert.ok([...shown].every((c) => !isControl(c.codePointAt(0) ?? 0)));
  });

  it("keeps a message's own lines as lines, indented so none passes for a line of ours", () => {
    assert.equal(
      printable("build failed:\ntrial-01  reward 1.0\r\nSTEP 2"),
      "build failed:\n    trial-01  reward 1.0\n    STEP 2",
    );
  });

  it("keeps ordinary text, accents and emoji as they are", () => {
    assert.equal(printable("close_enough pass, café ✓ 🚀"), "close_enough pass, café ✓ 🚀");
  });

  it("applies to the rollout line the run prints", () => {
    const r = {
      trial: "trial-01",
      rollout_name: "t__0",
      task_name: "t",
      rewards: { reward: 0 },
      error_category: null,
      test_last_line: "fail\x1b[2K\rreward 1.0",
    } as unknown as RolloutResult;
    assert.equal(rolloutLine(r, false), "trial-01  reward 0.0: fail\\x1b[2K\\x0dreward 1.0");
  });
});
