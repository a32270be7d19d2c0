// What `bench run` says last, on stderr with the other notes (stdout keeps only the result lines and
// the summary, for scripts): where the run went and the commands to look at it, and after an
// interruption the exact command that resumes it.
import path from "node:path";
import type { EvaluationResult } from "../job/evaluation.js";
import type { PlannedEvaluation } from "../job/plan.js";

/** `bench: the run is in ...` and `bench: look at it with ...`. */
export function whereLines(plan: PlannedEvaluation, cwd = process.cwd()): string[] {
  const jobs = shellQuote(shown(plan.jobsDir, cwd));
  const dirs = plan.jobs.map((j) => shown(j.dir, cwd));
  const first = dirs[0] ?? "";
  const last = dirs[dirs.length - 1] ?? "";
  const where =
    dirs.length <= 1 ? first : `${first} ... ${path.relative(path.dirname(path.dirname(first)), last)}`;
  const count = dirs.length === 1 ? "" : ` (${dirs.length} jobs, one per repeat)`;
  return [
    `bench: the run is in ${where}${count}`,
    `bench: look at it with: bench results ${jobs}   or   bench view ${jobs}`,
  ];
}

/** After a signal: what did not finish, and the command line that completes it. */
export function resumeLines(
  result: EvaluationResult,
  plan: PlannedEvaluation,
  argv: readonly string[],
): string[] {
  const planned = plan.jobs.length * plan.tasks.length;
  const finished = result.results.filter((r) => r.error_category !== "interrupted").length;
  return [
    `bench: interrupted: ${planned - finished} of ${planned} trial(s) did not finish; to finish them (the finished ones are kept), run:`,
    `  ${resumeCommand(argv, plan.jobName)}`,
  ];
}

/** `bench ARGS...` as typed, with `--job-name NAME` added when the run picked the name itself. */
export function resumeCommand(argv: readonly string[], jobName: string): string {
  const named = argv.some((a) => a === "--job-name" || a.startsWith("--job-name="));
  const args = named ? [...argv] : [...argv, "--job-name", jobName];
  return ["bench", ...args.map(shellQuote)].join(" ");
}

/** A path as the user would type it: relative to where they are when it is below it. */
function shown(dir: string, cwd: string): string {
  const rel = path.relative(cwd, dir);
  return rel === "" ? "." : rel.startsWith("..") || path.isAbsolute(rel) ? dir : rel;
}

/** One word for a POSIX shell: bare when it is safe, else single-quoted. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'"'"'`)}'`;
}
