// Strict JSONL: a broken line is an error that names the file and the line, never a silent skip.
import { promises as fs } from "node:fs";
import { DataError } from "../errors.js";

function parseJsonLines(text: string, displayPath: string): unknown[] {
  const out: unknown[] = [];
  let start = 0;
  let line = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    line++;
    const raw = text.slice(start, end);
    start = end + 1;
    if (raw.trim() === "") continue;
    try {
      out.push(JSON.parse(raw));
    } catch (err) {
      // Upstream's words ("invalid JSON"), so one grep finds the failure from either tool.
      throw new DataError(
        `${displayPath}: line ${line}: invalid JSON: ${(err as Error).message}. ` +
          "Repair or remove that line, then run the command again.",
      );
    }
  }
  return out;
}

/** undefined when the file does not exist. */
export async function readJsonLines(file: string, displayPath = file): Promise<unknown[] | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return parseJsonLines(text, displayPath);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
