// What `bench doctor` prints of the sandboxes' report (src/sandbox/doctor.ts): one line per check,
// its fix under it, then a line per sandbox in the flag's own words, the command's output.
import type { DoctorReport } from "../sandbox/doctor.js";

export function formatDoctor(report: DoctorReport): string {
  const lines = report.checks.map((c) => {
    const head = `${c.ok ? "ok  " : "FAIL"}  ${c.name.padEnd(32)} ${c.detail}`;
    return c.fix ? `${head}\n      fix: ${c.fix}` : head;
  });
  const say = (why: string | null) => (why === null ? "works" : "unavailable (see FAIL above)");
  lines.push("", `--sandbox container: ${say(report.sandboxes.container)}`);
  lines.push(`--sandbox namespace: ${say(report.sandboxes.namespace)}`);
  return `${lines.join("\n")}\n`;
}
