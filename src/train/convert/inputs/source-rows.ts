// Rows of a JSONL file given to `bench train convert` in place of a jobs folder: a canonical
// `results.jsonl` (Verifiers/Prime-RL shaped rows: prompt, completion, info, reward, trajectory) or
// an existing trainer file (prime-sft `messages` rows, trl-sft `prompt`/`completion`/`tools` rows).
// What the two converters share: reading the lines, the reward, and which results rows are not
// training data, with upstream's rules (export_prime_sft.py, export_trl_sft.py).
import { promises as fs } from "node:fs";
import { isRecord } from "../../../util/jsonl.js";

export type Row = Record<string, unknown>;

export interface SourceLine {
  row: Row;
  /** 0-based index among all lines, blank ones included (upstream's source_index). */
  index: number;
}

/**
 * Every non-blank line of the file as an object. A line that is not a JSON object is the data's
 * problem (exit 1): the error names the file, the line and the fix.
 */
export async function readSourceLines(file: string, display: string): Promise<SourceLine[]> {
  const text = await fs.readFile(file, "utf8");
  const out: SourceLine[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new Error(
        `${display} line ${index + 1}: not valid JSON (${(err as Error).message}). Repair or remove that line, then run the command again.`,
      );
    }
    if (!isRecord(value))
      throw new Error(
        `${display} line ${index + 1}: a row must be a JSON object; remove or repair that line.`,
      );
    out.push({ row: value, index });
  }
  return out;
}

/** `reward`, else `score` (only when there is no `reward` key), when it is a number. */
export function rowReward(row: Row): number | null {
  const v = "reward" in row ? row.reward : row.score;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export function infoOf(row: Row): Row {
  return isRecord(row.info) ? row.info : {};
}

/** A row BenchFlow's results.jsonl writer made (not a trainer row someone already cut). */
export function isResultsRow(row: Row): boolean {
  if (infoOf(row).source === "benchflow") return true;
  return ["trajectory", "stop_condition", "token_usage", "is_completed", "is_truncated"].some(
    (k) => k in row,
  );
}

/** Why a results row is not training data (upstream counts each as skipped_terminal_error), or null. */
export function resultsRowSkip(row: Row): string | null {
  if (!isResultsRow(row)) return null;
  if (infoOf(row).training_ready === false) return "not_training_ready";
  if (row.error) return "terminal_error";
  if (row.is_truncated === true) return "partial_trajectory";
  const stop = row.stop_condition;
  if (typeof stop === "string" && stop !== "" && stop !== "agent_completed") return stop;
  return null;
}

/** The first string among a row's fields and then its info's (task_id, task_name, agent, model). */
export function rowText(row: Row, ...keys: string[]): string | undefined {
  const info = infoOf(row);
  for (const source of [row, info])
    for (const k of keys) {
      const v = source[k];
      if (typeof v === "string" && v !== "") return v;
    }
  return undefined;
}

/** Drops undefined and null values, as upstream leaves null fields out of its rows. */
export function compact(row: Row): Row {
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== undefined && v !== null));
}
