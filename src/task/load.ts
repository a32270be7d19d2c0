// Loads a task folder (native task.md or split task.toml + instruction.md) into the one Task shape.
// A run loads all of its tasks first and refuses them together: a user fixing a folder of tasks
// sees every broken task and every problem at once, not one per attempt.
import path from "node:path";
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { inspectTask } from "./inspect.js";
import type { Task } from "./types.js";

export async function loadTask(dir: string): Promise<Task> {
  const { task, problems } = await inspectTask(dir);
  if (problems.length > 0 || !task) {
    const first = problems[0] ?? `${dir} is not a task folder`;
    const more =
      problems.length > 1 ? ` (and ${problems.length - 1} more problem(s); a task check lists them all)` : "";
    throw new UserInputError(`${first}${more}`);
  }
  return task;
}

/** A task that does not load, with each of its problems (file, field and fix in each). */
export interface BrokenTask {
  task: string;
  problems: string[];
}

/**
 * Every task of `dirs`, in order, or one UserInputError naming every broken task with all of its
 * problems, in the form `bench tasks check` prints. One task with one problem stays one line.
 */
export async function loadTasks(dirs: string[]): Promise<Task[]> {
  const inspected = await Promise.all(dirs.map(async (dir) => ({ dir, ...(await inspectTask(dir)) })));
  const broken: BrokenTask[] = inspected
    .filter((i) => i.problems.length > 0 || !i.task)
    .map((i) => ({
      task: path.basename(path.resolve(i.dir)),
      problems: i.problems.length > 0 ? i.problems : [`${i.dir} is not a task folder`],
    }));
  if (broken.length > 0) throw new UserInputError(refusal(broken, dirs.length));
  return inspected.map((i) => i.task as Task);
}

function refusal(broken: BrokenTask[], total: number): string {
  const [only] = broken;
  if (broken.length === 1 && only && only.problems.length === 1) return only.problems[0] ?? "";
  const lines = broken.flatMap((b) => b.problems.map((p) => `  ${b.task}: problem: ${p}`));
  const count = broken.reduce((n, b) => n + b.problems.length, 0);
  return [
    `${broken.length} of ${total} task(s) cannot run (${count} problem(s)); nothing was started. Fix each one below, or leave the task out with ${opt("exclude", "NAME")}:`,
    ...lines,
  ].join("\n");
}
