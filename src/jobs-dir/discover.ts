// Finding job folders and rollout folders under a path: a rollout folder, a job folder, or any
// folder of jobs (the agent folder holding trial-NN jobs, a whole jobs directory, upstream's layout
// with a summary copy above each job).
import { promises as fs } from "node:fs";
import path from "node:path";
import { isRolloutName, JOB_MARKERS, REPLACED, RESULT, ROLLOUT_MARKERS, TRAJECTORY_DIR } from "./layout.js";

const MAX_DEPTH = 8;

export interface FoundJob {
  dir: string;
  /** A job folder of an evaluation (plan, summary or lock): attempts of one task in it are retries. */
  isEvaluation: boolean;
  /** Its rollout folders, sorted by path. */
  rolloutDirs: string[];
}

async function entries(dir: string): Promise<Array<{ name: string; isDir: boolean }>> {
  try {
    const list = await fs.readdir(dir, { withFileTypes: true });
    return list.map((e) => ({ name: e.name, isDir: e.isDirectory() }));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw err;
  }
}

const hasAny = (names: Set<string>, wanted: readonly string[]) => wanted.some((w) => names.has(w));
const namesIn = async (dir: string) => new Set((await entries(dir)).map((e) => e.name));

export async function looksLikeRollout(dir: string, name: string): Promise<boolean> {
  if (isRolloutName(name)) return true;
  const names = await namesIn(dir);
  return !hasAny(names, JOB_MARKERS) && hasAny(names, ROLLOUT_MARKERS);
}

/** Rollout folders directly inside a folder, sorted by name. */
export async function rolloutDirsIn(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await entries(dir)) {
    if (!e.isDir || e.name.startsWith(".")) continue;
    const child = path.join(dir, e.name);
    if (await looksLikeRollout(child, e.name)) out.push(child);
  }
  return out.sort();
}

export async function isJobFolder(dir: string): Promise<boolean> {
  return hasAny(await namesIn(dir), JOB_MARKERS);
}

/**
 * Every job under root, sorted by path. A root that is itself a rollout makes its parent the job.
 * `visit` sees each folder above the jobs (the stream watches them for new jobs).
 */
export async function discoverJobs(root: string, visit?: (dir: string) => void): Promise<FoundJob[]> {
  const names = await namesIn(root);
  if (!hasAny(names, JOB_MARKERS) && hasAny(names, [RESULT, REPLACED, TRAJECTORY_DIR])) {
    const parent = path.dirname(root);
    return [{ dir: parent, isEvaluation: await isJobFolder(parent), rolloutDirs: [root] }];
  }
  const jobs: FoundJob[] = [];
  await walk(root, 0, jobs, visit);
  return jobs.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
}

async function walk(
  dir: string,
  depth: number,
  jobs: FoundJob[],
  visit?: (dir: string) => void,
): Promise<void> {
  const list = await entries(dir);
  const rollouts = await rolloutDirsIn(dir);
  const isEvaluation = hasAny(new Set(list.map((e) => e.name)), JOB_MARKERS);
  if (rollouts.length > 0) {
    jobs.push({ dir, isEvaluation, rolloutDirs: rollouts });
    return;
  }
  // A folder with job files but no rollouts is a planned job (or one the run never started),
  // unless jobs sit below it (upstream keeps a copy of the latest summary.json above its jobs).
  const before = jobs.length;
  if (depth < MAX_DEPTH) {
    for (const e of list) {
      if (e.isDir && !e.name.startsWith(".") && e.name !== "node_modules") {
        await walk(path.join(dir, e.name), depth + 1, jobs, visit);
      }
    }
  }
  if (isEvaluation && jobs.length === before) jobs.push({ dir, isEvaluation, rolloutDirs: [] });
  else visit?.(dir);
}

/** A job's id: the folder's name, or its path below the jobs' common folder when names repeat. */
export function jobIds(jobDirs: readonly string[]): Map<string, string> {
  const ids = new Map<string, string>();
  const names = jobDirs.map((d) => path.basename(d));
  if (new Set(names).size === names.length) {
    for (const [i, d] of jobDirs.entries()) ids.set(d, names[i] as string);
    return ids;
  }
  const common = commonFolder(jobDirs);
  for (const d of jobDirs) ids.set(d, path.relative(common, d).split(path.sep).join("/") || path.basename(d));
  return ids;
}

function commonFolder(dirs: readonly string[]): string {
  const parts = dirs.map((d) => path.resolve(d).split(path.sep));
  const first = parts[0] ?? [];
  let n = 0;
  while (n < first.length && parts.every((p) => p[n] === first[n])) n++;
  return first.slice(0, n).join(path.sep) || path.sep;
}
