import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuditReport, auditText } from "./report.js";

const report: AuditReport = {
  schema_version: 1,
  sandbox: "namespace",
  verifier_hardening: "on",
  accepted: 1,
  tasks: [
    {
      task: "weak",
      path: "/x/weak",
      nop_reward: 0,
      nop_error: null,
      exploits: [
        { name: "format-empty", kind: "format", hole: "only exists", reward: 1, error: null, accepted: true },
        {
          name: "reward-file",
          kind: "reward-file",
          hole: "trusts",
          reward: null,
          error: "boom\nmore",
          accepted: false,
        },
      ],
      not_applicable: ["conftest"],
      accepted: ["format-empty"],
    },
    {
      task: "sound",
      path: "/x/sound",
      nop_reward: null,
      nop_error: "verifier crashed",
      exploits: [],
      not_applicable: [],
      accepted: [],
    },
  ],
};

describe("the audit report", () => {
  it("its schema takes the shape the runner makes and refuses an unknown key", () => {
    assert.deepEqual(AuditReport.parse(report), report);
    assert.throws(() => AuditReport.parse({ ...report, extra: 1 }));
  });

  it("the text names each accepted exploit with its hole, an unscored one with its first error line, and a total", () => {
    const text = auditText(report);
    assert.match(text, /^weak: 1 exploit\(s\) ACCEPTED \(nop 0, 2 ran\)$/m);
    assert.match(text, /ACCEPTED format-empty +reward 1\n +hole: only exists\n/);
    assert.match(text, /held +reward-file +reward unscored \(boom\)\n/);
    assert.match(text, /^sound: no exploit accepted \(nop unscored \(verifier crashed\), 0 ran\)$/m);
    assert.match(
      text,
      /^2 task\(s\) audited in the namespace sandbox: 1 exploit\(s\) accepted in 1 task\(s\)\n$/m,
    );
  });
});
