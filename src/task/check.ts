// Reports every problem of a task at once, for authors fixing a task before any rollout runs, and
// notes on what a run will do that the task's files alone do not say (see intent.ts).
import path from "node:path";
import { inspectTask } from "./inspect.js";
import { runNotes } from "./intent.js";

export interface TaskCheck {
  task: string;
  problems: string[];
  warnings: string[];
  /** How a run treats the task where that differs from, or adds to, what its files say. */
  notes: string[];
}

export async function checkTask(dir: string): Promise<TaskCheck> {
  const { task, problems, checkProblems, warnings } = await inspectTask(dir);
  const notes = task ? await runNotes(task) : [];
  return {
    task: path.basename(path.resolve(dir)),
    problems: [...problems, ...checkProblems],
    warnings,
    notes,
  };
}
