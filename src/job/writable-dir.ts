// The jobs directory must be writable before anything runs: a bad --jobs-dir is bad input
// (exit 2), found before any rollout is written. Folders are made with makeDirs, which fails once
// where Node's recursive mkdir would loop for ever (a path under /proc).
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { MakeDirsError, makeDirs } from "../util/make-dirs.js";

export async function ensureWritableDir(dir: string, flag = opt("jobsDir")): Promise<void> {
  try {
    await makeDirs(dir);
    const probe = path.join(dir, `.benchflow-write-probe-${process.pid}`);
    await fs.writeFile(probe, "");
    await fs.rm(probe, { force: true });
  } catch (err) {
    if (err instanceof MakeDirsError && err.code === "ENOTDIR") {
      const where = err.at === path.resolve(dir) ? "" : ` (${err.at} is a file)`;
      throw new UserInputError(
        `${flag} ${dir}: not a folder${where}; pass a folder, or a path where one can be made`,
      );
    }
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    const at = err instanceof MakeDirsError && err.at !== path.resolve(dir) ? ` at ${err.at}` : "";
    throw new UserInputError(
      `cannot write to ${flag} ${dir} (${code}${at}): choose a folder you can write to, or fix its permissions`,
    );
  }
}
