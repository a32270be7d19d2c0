// How every `bench train` command ends: an error is one line on stderr and the exit code the docs
// promise, so a script can tell a data problem from a usage mistake.
import { DataError, messageOf } from "../../errors.js";
import { ExitCode, exitCodeOf } from "../errors.js";

/** Runs an action; errors become one line on stderr and the exit code the docs promise. */
export async function trainAction(name: string, fn: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await fn();
  } catch (err) {
    // The reader went away (`| head`): not a failure of ours.
    if ((err as NodeJS.ErrnoException).code === "EPIPE") return;
    process.stderr.write(`bench train ${name}: ${messageOf(err)}\n`);
    // convert and validate exit 1 when the data has a problem, as upstream's do; the stream keeps
    // upstream's own table (1 is "the run's process went away" there).
    code = name !== "stream" && err instanceof DataError ? 1 : exitCodeOf(err);
  }
  if (code !== 0) throw new ExitCode(code);
}
