// Finds the tasks under a path: the path itself when it is a task, else its immediate subfolders
// that are tasks, sorted by name and filtered by exact names or globs.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { opt, phrase } from "../options.js";
import { listTaskFiles } from "./digest.js";
import { matchesGlob } from "./glob.js";
import { TASK_FOLDER_HELP } from "./inspect.js";
import { displayPath } from "./source.js";

export interface DiscoverOptions {
  include?: string[];
  exclude?: string[];
  /** Told about tasks that hold symlinks (sandbox uploads skip them). */
  onWarning?: (message: string) => void;
}

const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

export async function isTaskDir(dir: string): Promise<boolean> {
  if (await exists(path.join(dir, "task.md"))) return true;
  return (await exists(path.join(dir, "task.toml"))) || (await exists(path.join(dir, "instruction.md")));
}

export async function discoverTasks(tasksPath: string, opts: DiscoverOptions = {}): Promise<string[]> {
  const root = path.resolve(tasksPath);
  const st = await fs.stat(root).catch(() => null);
  if (!st)
    throw new UserInputError(
      `tasks path ${tasksPath} does not exist; give a task folder or a folder of tasks`,
    );
  if (!st.isDirectory())
    throw new UserInputError(`tasks path ${tasksPath} is a file; give a task folder or a folder of tasks`);
  let found: string[];
  if (await isTaskDir(root)) found = [root];
  else {
    const entries = await fs.readdir(root, { withFileTypes: true });
    const dirs = entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    found = [];
    for (const name of dirs) if (await isTaskDir(path.join(root, name))) found.push(path.join(root, name));
    if (found.length === 0) {
      throw new UserInputError(
        `${displayPath(root)} holds no task: ${TASK_FOLDER_HELP}; give a task folder or a folder of them`,
      );
    }
  }
  const include = opts.include ?? [];
  const exclude = opts.exclude ?? [];
  const selected = found.filter((dir) => {
    const name = path.basename(dir);
    if (include.length > 0 && !include.some((p) => matchesGlob(name, p))) return false;
    return !exclude.some((p) => matchesGlob(name, p));
  });
  refuseEmptySelection(root, found, include, selected);
  if (opts.onWarning) {
    for (const dir of selected) {
      const { symlinks } = await listTaskFiles(dir);
      if (symlinks.length > 0) {
        opts.onWarning(
          `task ${path.basename(dir)} contains symlinks, which sandbox uploads skip: ${symlinks.join(", ")}`,
        );
      }
    }
  }
  return selected;
}

/** A filter that leaves nothing (or an --include that matches nothing, a typo) runs nothing: say so. */
function refuseEmptySelection(root: string, found: string[], include: string[], selected: string[]): void {
  const where = displayPath(root);
  const names = found.map((d) => path.basename(d));
  const shown = `${names.slice(0, 8).join(", ")}${names.length > 8 ? ", ..." : ""}`;
  const unmatched = include.filter((p) => !names.some((n) => matchesGlob(n, p)));
  if (unmatched.length > 0) {
    throw new UserInputError(
      `${opt("include")} ${unmatched.join(", ")} matches none of the ${names.length} task(s) in ${where} (${shown}); fix the name or glob`,
    );
  }
  if (selected.length === 0) {
    throw new UserInputError(
      `${phrase("include/exclude", "include/exclude")} leave none of the ${names.length} task(s) in ${where} (${shown}); nothing to run`,
    );
  }
}
