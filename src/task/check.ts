// Reports every problem of a task at once, for authors fixing a task before any rollout runs.
import path from "node:path";
import { inspectTask } from "./inspect.js";

export interface TaskCheck {
  task: string;
  problems: string[];
  warnings: string[];
}

export async function checkTask(dir: string): Promise<TaskCheck> {
  const { problems, checkProblems, warnings } = await inspectTask(dir);
  return { task: path.basename(path.resolve(dir)), problems: [...problems, ...checkProblems], warnings };
}
