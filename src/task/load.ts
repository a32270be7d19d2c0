// Loads a task folder (native task.md or split task.toml + instruction.md) into the one Task shape.
import { UserInputError } from "../errors.js";
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
