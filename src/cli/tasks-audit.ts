// `bench tasks audit TASK_OR_DIR`: the audit's exploit agents against each task's own verifier
// (src/audit/). Exit 1 when a verifier accepted an exploit: a weak verifier is the author's to fix
// before anyone trains on it.
import type { Command } from "commander";
import { auditText } from "../audit/report.js";
import { auditTasks } from "../audit/run.js";
import type { SandboxChoice } from "../sandbox/select.js";
import { ExitCode } from "./errors.js";
import { withHelp } from "./help.js";
import { TASKS_AUDIT_HELP } from "./help-pages.js";
import { atLeast, oneOf, parseOnOff } from "./options.js";
import { createProgress } from "./progress.js";
import { sandboxChoice } from "./run.js";

interface AuditFlags {
  sandbox?: SandboxChoice;
  concurrency: number;
  json?: boolean;
  jobsDir?: string;
  verifierHardening?: "on" | "off";
  quiet?: boolean;
}

export function registerTasksAudit(tasks: Command): void {
  const audit = tasks
    .command("audit")
    .description("Run the built-in exploit agents against each task's verifier; exit 1 when one is accepted")
    .argument("<task-or-dir...>", "task folders, or folders of tasks")
    .option(
      "--sandbox <kind>",
      "auto, namespace or container",
      oneOf(["auto", "namespace", "container"] as const),
    )
    .option("-j, --concurrency <n>", "rollouts at once (exploits of a task run side by side)", atLeast(1), 4)
    .option("--json", "print the report as JSON (docs/write-a-task.md shows its shape)")
    .option("--jobs-dir <dir>", "keep the audit's rollouts here (default: a temporary folder, removed)")
    .option(
      "--verifier-hardening <on|off>",
      "audit with the hardening on (default) or off",
      parseOnOff("--verifier-hardening"),
    )
    .option("-q, --quiet", "no progress output")
    .action(async (dirs: string[], opts: AuditFlags) => {
      const report = await auditTasks({
        tasks: dirs,
        sandbox: sandboxChoice(opts.sandbox),
        concurrency: opts.concurrency,
        jobsDir: opts.jobsDir ?? null,
        ...(opts.verifierHardening ? { verifierHardening: opts.verifierHardening } : {}),
        onEvent: createProgress(process.stderr, { quiet: opts.quiet === true || opts.json === true }).onEvent,
      });
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : auditText(report));
      if (report.accepted > 0) throw new ExitCode(1);
    });
  withHelp(audit, TASKS_AUDIT_HELP);
}
