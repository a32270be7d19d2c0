// The SLURM client programs, as the submitting host calls them. Every call goes through here, so a
// missing `sbatch` is one clear error and the parsing of SLURM's output lives in one place.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";

const exec = promisify(execFile);

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function slurm(cmd: string, args: string[], timeoutMs = 30_000): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await exec(cmd, args, { timeout: timeoutMs, maxBuffer: 8 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string; code?: unknown };
    if (e.code === "ENOENT")
      throw new UserInputError(
        `${opt("executor", "slurm")}: ${cmd} is not installed here; run on a SLURM login node (or scripts/setup-slurm.sh for a local cluster)`,
      );
    return {
      code: typeof e.code === "number" ? e.code : 1,
      stdout: e.stdout ?? "",
      stderr: e.stderr ?? String(err),
    };
  }
}

/** `scontrol show job -o ID` as key=value pairs; null when SLURM no longer knows the job. */
export async function showJob(id: string): Promise<Record<string, string> | null> {
  const r = await slurm("scontrol", ["show", "job", "-o", id]);
  if (r.code !== 0 || !r.stdout.includes("JobId=")) return null;
  const fields: Record<string, string> = {};
  // Values have no spaces except a few (Command=, Comment=) that we do not read past their start.
  for (const part of r.stdout.trim().split(/\s+/)) {
    const eq = part.indexOf("=");
    if (eq > 0) fields[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return fields;
}

/** JobState values after which the job will not run again (requeue is off: --no-requeue). */
const ENDED = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "BOOT_FAIL",
  "DEADLINE",
  "OUT_OF_MEMORY",
  "SPECIAL_EXIT",
  "REVOKED",
]);

export function hasEnded(state: string): boolean {
  return ENDED.has(state);
}

/** Job ids of the queue whose comment is `comment` exactly. */
export async function jobsWithComment(predicate: (comment: string) => boolean): Promise<string[]> {
  const r = await slurm("squeue", ["-h", "-o", "%i|%k"]);
  if (r.code !== 0) return [];
  return r.stdout
    .split("\n")
    .map((line) => line.split("|"))
    .filter(([id, comment]) => id && comment !== undefined && predicate(comment.trim()))
    .map(([id]) => id as string);
}

export async function cancel(ids: string[]): Promise<void> {
  if (ids.length > 0) await slurm("scancel", ids);
}
