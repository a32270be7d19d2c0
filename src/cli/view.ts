// `bench view [JOBS_DIR]`: serve the run as a local web app (src/view), or --export one HTML page.
import { spawn } from "node:child_process";
import type { Command } from "commander";
import { messageOf, UserInputError } from "../errors.js";
import { exportRun } from "../view/export.js";
import { assertAdvantage } from "../view/model/run-summary.js";
import { isLoopback, startViewServer } from "../view/server.js";
import { exitCodeOf } from "./errors.js";
import { withHelp } from "./help.js";
import { SUMMARY_GROUP_BY_HELP, VIEW_HELP } from "./help-pages.js";
import { parseInteger } from "./options.js";

interface ViewFlags {
  host: string;
  port: number;
  groupBy?: string;
  advantage: string;
  export?: string;
  open: boolean;
}

export function registerViewCommand(program: Command): void {
  const cmd = program
    .command("view")
    .description("look at a run in the browser: runs, groups with advantages, rollouts with their tokens")
    .argument("[jobs-dir]", "the jobs folder (or one job or trial-NN folder in it)", "jobs")
    .option("--host <host>", "address to listen on (loopback by default)", "127.0.0.1")
    .option("--port <port>", "port (0: any free port)", parseInteger, 0)
    .option("--group-by <keys>", SUMMARY_GROUP_BY_HELP)
    .option("--advantage <name>", "grpo or loo (the pages switch between them)", "grpo")
    .option("--export <file.html>", "write one self-contained page of the run and exit")
    .option("--no-open", "do not open a browser")
    .action(async (jobsDir: string, o: ViewFlags) => {
      try {
        const advantage = assertAdvantage(o.advantage);
        if (o.export) {
          const r = await exportRun(jobsDir, o.export, { groupBy: o.groupBy, advantage });
          process.stdout.write(
            `wrote ${r.file}: ${r.rollouts} rollouts, ${r.groups} groups, ${r.bytes} bytes\n`,
          );
          return;
        }
        if (o.port < 0 || o.port > 65535) throw new UserInputError(`--port ${o.port}: give 0 to 65535.`);
        if (!isLoopback(o.host))
          process.stderr.write(
            `warning: --host ${o.host} is not loopback: every trajectory, prompt and tool output in ${jobsDir} becomes visible to the network. Use --host 127.0.0.1 to keep it local.\n`,
          );
        const server = await startViewServer({
          jobsDir,
          host: o.host,
          port: o.port,
          groupBy: o.groupBy,
          advantage,
        });
        process.stdout.write(
          `bench view: ${server.url} (${server.index.rollouts.size} rollouts; Ctrl-C to stop)\n`,
        );
        if (o.open && process.stdout.isTTY && (process.env.DISPLAY || process.env.WAYLAND_DISPLAY))
          openBrowser(server.url);
        const stop = () => {
          server.close().finally(() => process.exit(0));
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      } catch (err) {
        process.stderr.write(`bench view: ${messageOf(err)}\n`);
        process.exitCode = exitCodeOf(err);
      }
    });
  withHelp(cmd, VIEW_HELP);
}

function openBrowser(url: string): void {
  try {
    const child = spawn("xdg-open", [url], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No opener: the printed URL is enough.
  }
}
