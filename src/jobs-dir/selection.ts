// `--canonical-selection FILE` (and validate's `--source-canonical-selection`): the rollouts a
// canonical-selection.json selects, upstream's `{job_dir, selected: [{rollout_dir, ...}]}` (or
// `selection`). The selection is applied before groups, advantages and --min-reward, so the rows
// it leaves out never move a baseline; retried attempts are then judged among the selected ones.
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { isRecord } from "../util/jsonl.js";
import { settleAttempts } from "./attempts.js";
import { RESULT } from "./layout.js";
import type { JobRollouts, JobsScan } from "./scan.js";

export interface CanonicalSelection {
  file: string;
  /** The selected rollout folders, as resolved (absolute), in the file's order. */
  dirs: string[];
}

const isFile = (p: string) =>
  fs.stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

/** Upstream's places for a row's folder: as written, below job_dir, or beside the row's result_json. */
async function rolloutDirOf(row: Record<string, unknown>, jobDir: string, file: string): Promise<string[]> {
  const raw = row.rollout_dir as string;
  const tried = [path.resolve(raw)];
  if (!path.isAbsolute(raw)) tried.push(path.resolve(jobDir, raw));
  const resultJson = row.result_json;
  if (typeof resultJson === "string" && resultJson !== "") {
    let result = resultJson;
    // A selection copied with its jobs: the absolute path still names the old place.
    const marker = `/${path.basename(path.dirname(path.resolve(file)))}/`;
    if (path.isAbsolute(result) && !(await isFile(result)) && result.includes(marker))
      result = path.join(
        path.dirname(path.resolve(file)),
        result.slice(result.indexOf(marker) + marker.length),
      );
    tried.push(path.dirname(path.resolve(result)));
  }
  return tried;
}

/** The file's `selected` (or `selection`) list as it is, and its job_dir; rows are not looked at. */
export async function readSelectionList(
  file: string,
  flag = opt("canonicalSelection"),
): Promise<{ rows: unknown[]; jobDir: string }> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch {
    throw new UserInputError(
      `${flag} ${file}: no such file. Give the canonical-selection.json bench run wrote.`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${file}: not valid JSON (${(err as Error).message}); a canonical selection is one JSON object.`,
    );
  }
  if (!isRecord(data))
    throw new Error(`${file}: a canonical selection is a JSON object with a "selected" list of rows.`);
  const selected = data.selected ?? data.selection;
  if (!Array.isArray(selected))
    throw new Error(`${file}: "selected" (or "selection") must be a list of rows, each with a rollout_dir.`);
  return { rows: selected, jobDir: typeof data.job_dir === "string" ? data.job_dir : "" };
}

/** The selection with every row's rollout folder found; a row that names none is an error. */
export async function readCanonicalSelection(
  file: string,
  flag = opt("canonicalSelection"),
): Promise<CanonicalSelection> {
  const { rows, jobDir } = await readSelectionList(file, flag);
  const dirs: string[] = [];
  for (const [i, row] of rows.entries()) {
    const where = `${file}: selected row ${i + 1}`;
    if (!isRecord(row)) throw new Error(`${where} is not an object; each row names its rollout_dir.`);
    if (typeof row.rollout_dir !== "string" || row.rollout_dir === "")
      throw new Error(`${where} has no rollout_dir; each row names the rollout folder it selects.`);
    const tried = await rolloutDirOf(row, jobDir, file);
    let found: string | undefined;
    for (const dir of tried) if (!found && (await isFile(path.join(dir, RESULT)))) found = dir;
    if (!found) {
      throw new Error(
        `${where}: the rollout ${row.rollout_dir} has no ${RESULT} (looked in ${[...new Set(tried)].join(", ")}); ` +
          "fix its rollout_dir or job_dir, or select another rollout.",
      );
    }
    dirs.push(found);
  }
  return { file, dirs };
}

const real = (p: string) => fs.realpath(p).catch(() => path.resolve(p));

/**
 * The scan with only the selected rollouts. A selected folder that the scan does not reach is an
 * error: convert reads the path it was given, and a selection of other rollouts is the wrong file.
 */
export async function restrictScan(
  scan: JobsScan,
  sel: CanonicalSelection,
  input: string,
): Promise<JobsScan> {
  const wanted = new Map<string, string>();
  for (const d of sel.dirs) wanted.set(await real(d), d);
  const seen = new Set<string>();
  async function* eachJob(): AsyncGenerator<JobRollouts> {
    for await (const j of scan.eachJob()) {
      const rollouts = [];
      for (const r of j.rollouts) {
        const key = await real(r.dir);
        if (!wanted.has(key)) continue;
        seen.add(key);
        rollouts.push(r);
      }
      // The attempt rule over the selection alone: a selected attempt is final among those selected.
      if (rollouts.length > 0) yield { job: j.job, rollouts: settleAttempts(rollouts, j.job.isEvaluation) };
    }
    const missing = [...wanted.keys()].filter((k) => !seen.has(k));
    if (missing.length > 0) {
      throw new Error(
        `${sel.file}: ${missing.length} selected rollout(s) are not under ${input} (first: ${wanted.get(missing[0] as string)}); ` +
          "convert the folder the selection was made from.",
      );
    }
  }
  return { ...scan, eachJob };
}
