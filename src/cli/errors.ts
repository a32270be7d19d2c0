// One clear line on stderr and the exit status the docs promise: 2 for bad input, 1 otherwise
// (`bench train stream`: 1 when the run's process went away, 3 on its timeout).
import { messageOf, UserInputError } from "../errors.js";
import { JobProcessGone, StreamTimeout } from "../train/stream/errors.js";

export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** commander's own errors: it has already printed its message. */
function commanderCode(err: unknown): string | null {
  const code = (err as { code?: string } | null)?.code;
  return typeof code === "string" && code.startsWith("commander.") ? code : null;
}

/** The one table from an error to the exit status. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof ExitCode) return err.code;
  if (err instanceof UserInputError) return 2;
  // RunStopped (the run stopped starting rollouts) is a JobProcessGone: an infrastructure end, exit 1.
  if (err instanceof JobProcessGone || err instanceof StreamTimeout) return err.exitCode;
  const code = commanderCode(err);
  // Usage mistakes are bad input (2), help is not. `bench help run` is "commander.help" with exit 0;
  // `bench` or `bench train` with no command gets the help on stderr with commander's exit 1: usage, 2.
  if (code === "commander.help") return (err as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  if (code !== null) return code === "commander.helpDisplayed" || code === "commander.version" ? 0 : 2;
  return 1;
}

export function reportError(err: unknown): number {
  const exit = exitCodeOf(err);
  if (err instanceof ExitCode) return exit;
  // A usage line names its command itself (`bench run: ...`).
  if (err instanceof UserInputError && err.name === "UsageError") {
    process.stderr.write(`${err.message}\n`);
    return exit;
  }
  if (err instanceof UserInputError) {
    process.stderr.write(`bench: ${err.message}\n`);
    return exit;
  }
  if (commanderCode(err) !== null) return exit;
  process.stderr.write(`bench: ${messageOf(err)}\n`);
  if (process.env.BENCHFLOW_DEBUG) process.stderr.write(`${(err as Error).stack ?? ""}\n`);
  return exit;
}

/**
 * A reader that went away (`bench run --help | head`) is not a crash: the write fails quietly and
 * the command ends as it would have (`bench train stream` has its own listener, which stops it).
 */
export function ignoreClosedStdout(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
}
