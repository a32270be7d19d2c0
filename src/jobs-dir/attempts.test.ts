// The final-attempt rule, level by level: each case differs from the winner in one fact only, so a
// rule applied in the wrong order picks the other attempt.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type AttemptFields, finalAttempt, replacedIn } from "./attempts.js";

function attempt(name: string, facts: Partial<AttemptFields> = {}): AttemptFields {
  return {
    dir: `/jobs/j/${name}`,
    name,
    task: "t",
    agent: "oracle",
    model: null,
    replaced: null,
    reward: null,
    attempt: null,
    startedAt: null,
    mtimeMs: 0,
    ...facts,
  };
}

const pick = (...attempts: AttemptFields[]) => finalAttempt(attempts)?.name ?? null;

describe("the final attempt", () => {
  it("is never a replaced one, even scored, newest and highest", () => {
    const replaced = { replacedBy: "t__b", reason: "retried", at: null, marker: true };
    const a = attempt("t__a", { replaced, reward: 1, attempt: 9, startedAt: "2026-02", mtimeMs: 9 });
    assert.equal(pick(a, attempt("t__b")), "t__b");
    assert.equal(pick(a), null);
  });

  it("is scored before unscored, whatever the attempt number, start time and mtime", () => {
    const scored = attempt("t__a", { reward: 0, attempt: 1, startedAt: "2026-01", mtimeMs: 1 });
    const later = attempt("t__b", { attempt: 2, startedAt: "2026-02", mtimeMs: 2 });
    assert.equal(pick(later, scored), "t__a");
  });

  it("then the higher attempt number, even when it started earlier and has the older mtime", () => {
    const second = attempt("t__a", { attempt: 2, startedAt: "2026-01", mtimeMs: 1 });
    const first = attempt("t__b", { attempt: 1, startedAt: "2026-02", mtimeMs: 2 });
    assert.equal(pick(first, second), "t__a");
  });

  it("then the later started_at, even with the older mtime", () => {
    const later = attempt("t__a", { attempt: 1, startedAt: "2026-02", mtimeMs: 1 });
    const earlier = attempt("t__b", { attempt: 1, startedAt: "2026-01", mtimeMs: 2 });
    assert.equal(pick(earlier, later), "t__a");
  });

  it("then the newer mtime, then the name: never the order the folders were listed in", () => {
    assert.equal(pick(attempt("t__b", { mtimeMs: 1 }), attempt("t__a", { mtimeMs: 2 })), "t__a");
    assert.equal(pick(attempt("t__b"), attempt("t__a")), "t__b");
    assert.equal(pick(attempt("t__a"), attempt("t__b")), "t__b");
  });
});

describe("supersededIn", () => {
  it("in an evaluation, replaces every attempt of a (task, agent, model) but the final one", () => {
    const rollouts = [
      attempt("t__a", { attempt: 1 }),
      attempt("t__b", { attempt: 2 }),
      attempt("t__c", { attempt: 1, model: "other" }),
      attempt("u__d", { task: "u" }),
    ];
    const out = replacedIn(rollouts, true);
    assert.deepEqual(
      [...out.entries()],
      [["/jobs/j/t__a", { replacedBy: "t__b", reason: "retried", at: null, marker: false }]],
    );
  });

  it("outside an evaluation, only a marker replaces", () => {
    const replaced = { replacedBy: "t__b", reason: "resumed", at: "2026-01-01", marker: true };
    const out = replacedIn([attempt("t__a", { replaced }), attempt("t__b"), attempt("t__c")], false);
    assert.deepEqual([...out.entries()], [["/jobs/j/t__a", replaced]]);
  });
});
