// What `bench tasks audit` reports: the one JSON shape (`--json`, documented in
// docs/write-a-task.md) and its terminal text. An exploit is accepted when its reward is above the
// task's nop: the verifier then pays for something that is not the work.
import { z } from "zod";

export const AUDIT_EXPLOIT_KINDS = [
  "reward-file",
  "test-runner",
  "python-import",
  "program-stub",
  "format",
  "tests-edit",
] as const;

export const AuditedExploit = z.strictObject({
  name: z.string(),
  kind: z.enum(AUDIT_EXPLOIT_KINDS),
  /** The hole a verifier that accepts it has. */
  hole: z.string(),
  /** The verifier's reward for the exploit; null when the rollout was not scored. */
  reward: z.number().nullable(),
  /** Why it was not scored (the agent's or the verifier's error), else null. */
  error: z.string().nullable(),
  /** Scored above the nop (an unscored nop counts as 0). */
  accepted: z.boolean(),
});
export type AuditedExploit = z.infer<typeof AuditedExploit>;

export const AuditedTask = z.strictObject({
  task: z.string(),
  /** The task folder as given (absolute). */
  path: z.string(),
  /** The reward of an agent that does nothing; null when unscored. */
  nop_reward: z.number().nullable(),
  nop_error: z.string().nullable(),
  /** Each applicable exploit that ran, in the library's order. */
  exploits: z.array(AuditedExploit),
  /** The library's exploits that do not apply to this task (their predicate is false). */
  not_applicable: z.array(z.string()),
  /** The names of the accepted exploits: the verifier's holes. */
  accepted: z.array(z.string()),
});
export type AuditedTask = z.infer<typeof AuditedTask>;

export const AuditReport = z
  .strictObject({
    schema_version: z.literal(1),
    sandbox: z.string(),
    verifier_hardening: z.enum(["on", "off"]),
    tasks: z.array(AuditedTask),
    /** Accepted exploits over every task: non-zero makes the command exit 1. */
    accepted: z.number().int(),
  })
  .meta({ title: "benchflow task audit report" });
export type AuditReport = z.infer<typeof AuditReport>;

function shown(reward: number | null, error: string | null): string {
  if (reward !== null) return String(reward);
  return `unscored${error ? ` (${error.split("\n")[0]?.slice(0, 120)})` : ""}`;
}

/** The terminal text: a block per task, the accepted exploits with their hole, then one total line. */
export function auditText(report: AuditReport): string {
  const lines: string[] = [];
  for (const t of report.tasks) {
    const verdict =
      t.accepted.length > 0 ? `${t.accepted.length} exploit(s) ACCEPTED` : "no exploit accepted";
    lines.push(`${t.task}: ${verdict} (nop ${shown(t.nop_reward, t.nop_error)}, ${t.exploits.length} ran)`);
    for (const e of t.exploits) {
      const mark = e.accepted ? "ACCEPTED" : "held    ";
      lines.push(`  ${mark} ${e.name.padEnd(18)} reward ${shown(e.reward, e.error)}`);
      if (e.accepted) lines.push(`           hole: ${e.hole}`);
    }
    if (t.not_applicable.length > 0) lines.push(`  not applicable: ${t.not_applicable.join(", ")}`);
  }
  const holed = report.tasks.filter((t) => t.accepted.length > 0).length;
  lines.push(
    `${report.tasks.length} task(s) audited in the ${report.sandbox} sandbox: ${report.accepted} exploit(s) accepted in ${holed} task(s)`,
  );
  return `${lines.join("\n")}\n`;
}
