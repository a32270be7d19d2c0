// `bench doctor` (which sandboxes work here, and the fix for each that does not) and
// `bench build` (build task images ahead of a run).
import path from "node:path";
import type { Command } from "commander";
import { slurmDoctor } from "../job/slurm/doctor.js";
import { buildTaskImage } from "../sandbox/container/index.js";
import { runDoctor } from "../sandbox/doctor.js";
import { discoverTasks } from "../task/discover.js";
import { loadTask } from "../task/load.js";
import { formatDoctor } from "./doctor-text.js";
import { ExitCode } from "./errors.js";
import { withHelp } from "./help.js";
import { BUILD_HELP, DOCTOR_HELP } from "./help-pages.js";

export function registerSandboxCommands(program: Command): void {
  const doctor = program
    .command("doctor")
    .description("Say which sandboxes work on this machine, and how to fix those that do not")
    .option(
      "--jobs-dir <dir>",
      "the jobs folder --executor slurm would use (checked from every node)",
      "jobs",
    )
    .option("--slurm-partition <name>", "the partition --executor slurm would use")
    .action(async (opts: { jobsDir: string; slurmPartition?: string }) => {
      const report = await runDoctor();
      const cluster = await slurmDoctor(opts.jobsDir, { partition: opts.slurmPartition ?? null });
      report.checks.push(...cluster.checks);
      process.stdout.write(`${formatDoctor(report)}`);
      process.stdout.write(
        `--executor slurm: ${cluster.unusable === null ? "works" : "unavailable (see FAIL above)"}\n\n`,
      );
      // Exit 1 only when no sandbox at all can run here.
      if (report.sandboxes.container !== null && report.sandboxes.namespace !== null) throw new ExitCode(1);
    });
  withHelp(doctor, DOCTOR_HELP);
  const build = program
    .command("build")
    .description("Build the container image of a task, or of each task in a folder, ahead of a run")
    .argument("<task-or-dir>", "a task folder, or a folder of tasks")
    .option("--force", "rebuild even when an image of the same environment/ exists")
    .action(async (dir: string, opts: { force?: boolean }) => {
      const dirs = await discoverTasks(dir, {});
      let failed = 0;
      for (const taskDir of dirs) {
        const t0 = Date.now();
        let name = path.basename(taskDir);
        try {
          // A broken task is one failed line, and the next task still builds.
          const task = await loadTask(taskDir);
          name = task.name;
          const { image, built } = await buildTaskImage(task, { force: opts.force === true });
          const how = built ? `built in ${((Date.now() - t0) / 1000).toFixed(1)}s` : "up to date";
          process.stdout.write(`${task.name}: ${image} (${how})\n`);
        } catch (err) {
          failed++;
          process.stdout.write(`${name}: ${(err as Error).message}\n`);
        }
      }
      if (failed > 0) {
        process.stderr.write(`${failed} of ${dirs.length} task(s) did not build\n`);
        throw new ExitCode(1);
      }
    });
  withHelp(build, BUILD_HELP);
}
