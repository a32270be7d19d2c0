// One clear line on stderr and the exit status the docs promise: 2 for bad input, 1 otherwise.
import { messageOf, UserInputError } from "../errors.js";

export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export function reportError(err: unknown): number {
  if (err instanceof ExitCode) return err.code;
  if (err instanceof UserInputError) {
    process.stderr.write(`bench: ${err.message}\n`);
    return 2;
  }
  const code = (err as { code?: string }).code;
  // commander has already printed its message; usage mistakes are bad input (2), help is not.
  if (typeof code === "string" && code.startsWith("commander.")) {
    return code === "commander.helpDisplayed" || code === "commander.version" || code === "commander.help"
      ? 0
      : 2;
  }
  process.stderr.write(`bench: ${messageOf(err)}\n`);
  if (process.env.BENCHFLOW_DEBUG) process.stderr.write(`${(err as Error).stack ?? ""}\n`);
  return 1;
}
