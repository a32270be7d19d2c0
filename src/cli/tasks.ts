// `bench tasks check PATH...`: every problem of every task under each path, and a non-zero exit
// when there is one.
import type { Command } from "commander";
import { messageOf } from "../errors.js";
import { checkTask } from "../task/check.js";
import { discoverTasks } from "../task/discover.js";
import { ExitCode } from "./errors.js";
import { withHelp } from "./help.js";
import { TASKS_CHECK_HELP, TASKS_HELP } from "./help-pages.js";
import { oneOf } from "./options.js";
import { SANDBOXES } from "./run.js";
import { registerTasksAudit } from "./tasks-audit.js";
import { type ControlsOptions, checkTasksControls } from "./tasks-controls.js";

export function registerTasksCommands(program: Command): void {
  const tasks = program.command("tasks").description("Work with task folders");
  withHelp(tasks, TASKS_HELP);
  const check = tasks
    .command("check")
    .description("Report every problem of a task, or of each task in a folder (several paths: each of them)")
    .argument("<task-or-dir...>", "task folders, or folders of tasks")
    .option(
      "--controls",
      "also run each sound task's controls (oracle and nop, twice each) and cache the verdict",
    )
    .option("--sandbox <kind>", "with --controls: auto, namespace or container", oneOf(SANDBOXES))
    .option("--jobs-dir <dir>", "with --controls: the jobs folder whose .controls/ caches verdicts", "jobs")
    .action(async (paths: string[], o: ControlsOptions & { controls?: boolean }) => {
      let failing = 0;
      let total = 0;
      for (const dir of paths) {
        // A path that is not there is one more problem to report, not the end of the check.
        let dirs: string[];
        try {
          dirs = await discoverTasks(dir, {});
        } catch (err) {
          process.stdout.write(`${dir}: problem: ${messageOf(err)}\n`);
          failing++;
          total++;
          continue;
        }
        total += dirs.length;
        for (const taskDir of dirs) {
          const sound = await checkOne(taskDir);
          if (!sound) failing++;
          else if (o.controls && !(await checkTasksControls([taskDir], o))) failing++;
        }
      }
      if (failing > 0) {
        process.stderr.write(`${failing} of ${total} task(s) have problems\n`);
        throw new ExitCode(1);
      }
    });
  withHelp(check, TASKS_CHECK_HELP);
  registerTasksAudit(tasks);
}

/** One task's lines; false when it has a problem. */
async function checkOne(taskDir: string): Promise<boolean> {
  const report = await checkTask(taskDir);
  for (const w of report.warnings) process.stdout.write(`${report.task}: warning: ${w}\n`);
  for (const n of report.notes) process.stdout.write(`${report.task}: note: ${n}\n`);
  for (const p of report.problems) process.stdout.write(`${report.task}: problem: ${p}\n`);
  const heeds = report.warnings.length + report.notes.length;
  if (report.problems.length > 0) return false;
  // "ok" alone only when nothing above needs reading: a bare ok hid compose files and unused Dockerfiles.
  if (heeds === 0) process.stdout.write(`${report.task}: ok\n`);
  else process.stdout.write(`${report.task}: ok, with ${heeds} note(s) and warning(s) above\n`);
  return true;
}
