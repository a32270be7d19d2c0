// File writes that a reader may see mid-run are atomic: temp file, fsync, rename.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { floatJson } from "./float-json.js";

/**
 * Readers never see a half-written file (rename is atomic). `durable` also fsyncs before the
 * rename, so the file survives a machine crash: worth it for result.json, which marks a rollout
 * final, not for every side file of a rollout (each fsync costs milliseconds).
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: { durable?: boolean } = {},
): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await fs.open(tmp, "w");
  try {
    await handle.writeFile(data);
    if (opts.durable) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** `floats`: fields whose numbers are written as floats (`1.0`), as upstream's Python writes them. */
export function writeJsonAtomic(
  file: string,
  value: unknown,
  opts: { durable?: boolean; floats?: ReadonlySet<string> } = {},
): Promise<void> {
  const text = opts.floats
    ? floatJson(value, { indent: 2, floats: opts.floats, verbatim: new Set() })
    : JSON.stringify(value, null, 2);
  return writeFileAtomic(file, `${text}\n`, opts);
}

export async function readJsonIfExists<T = unknown>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
  return JSON.parse(text) as T;
}

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** A name as one file or folder name (an acp: agent's name holds a command or a package: "/", "@", " "). */
export function fileSafeName(name: string): string {
  return name.replace(/[^\w.-]+/g, "_");
}
