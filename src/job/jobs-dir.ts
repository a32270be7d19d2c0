// The jobs directory must be writable before anything runs: a bad --jobs-dir is bad input
// (exit 2), found before any rollout is written.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";

export async function ensureWritableDir(dir: string, flag = "--jobs-dir"): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true });
    const probe = path.join(dir, `.benchflow-write-probe-${process.pid}`);
    await fs.writeFile(probe, "");
    await fs.rm(probe, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new UserInputError(
      `cannot write to ${flag} ${dir} (${code}): choose a folder you can write to, or fix its permissions`,
    );
  }
}
