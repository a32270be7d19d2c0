// `bench tasks check DIR`: every problem of every task, and a non-zero exit when there is one.
import type { Command } from "commander";
import { checkTask } from "../task/check.js";
import { discoverTasks } from "../task/discover.js";
import { ExitCode } from "./errors.js";

export function registerTasksCommands(program: Command): void {
  const tasks = program.command("tasks").description("Work with task folders");
  tasks
    .command("check")
    .description("Report every problem of a task, or of each task in a folder")
    .argument("<task-or-dir>", "a task folder, or a folder of tasks")
    .action(async (dir: string) => {
      const dirs = await discoverTasks(dir, {});
      let failing = 0;
      for (const taskDir of dirs) {
        const report = await checkTask(taskDir);
        for (const w of report.warnings) process.stdout.write(`${report.task}: warning: ${w}\n`);
        for (const n of report.notes) process.stdout.write(`${report.task}: note: ${n}\n`);
        for (const p of report.problems) process.stdout.write(`${report.task}: problem: ${p}\n`);
        const heeds = report.warnings.length + report.notes.length;
        if (report.problems.length > 0) failing++;
        // "ok" alone only when nothing above needs reading: a bare ok hid compose files and unused Dockerfiles.
        else if (heeds === 0) process.stdout.write(`${report.task}: ok\n`);
        else process.stdout.write(`${report.task}: ok, with ${heeds} note(s) and warning(s) above\n`);
      }
      if (failing > 0) {
        process.stderr.write(`${failing} of ${dirs.length} task(s) have problems\n`);
        throw new ExitCode(1);
      }
    });
}
