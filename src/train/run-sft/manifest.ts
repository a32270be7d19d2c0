// `<work-dir>/train-run.json` and `command.txt`: the record of one trainer launch, in upstream's
// shape (schema_version 1, run_type, backend, commands, components, artifacts, extra), so a tool
// that reads upstream's train runs reads ours.
import type { TrainRunManifest } from "../../schemas/train-run.js";
import { writeFileAtomic } from "../../util/fs.js";

export type { CommandRecord, RunStatus, TrainComponent, TrainRunManifest } from "../../schemas/train-run.js";

/** The credentials a trainer may read (Hugging Face, Prime Intellect, W&B): their names are recorded. */
export const CREDENTIAL_ENV_KEYS = [
  "HF_TOKEN",
  "HUGGINGFACE_HUB_TOKEN",
  "PRIME_API_KEY",
  "PRIMEINTELLECT_API_KEY",
  "WANDB_API_KEY",
] as const;

export function recordedEnvKeys(env: NodeJS.ProcessEnv): string[] {
  return CREDENTIAL_ENV_KEYS.filter((k) => env[k]).sort();
}

/** UTC, whole seconds, `+00:00`: how upstream stamps created_at and updated_at. */
export function utcNow(now = new Date()): string {
  return `${now.toISOString().slice(0, 19)}+00:00`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
  return out;
}

/** As Python's json.dumps(indent=2, sort_keys=True) writes it, non-ASCII escaped. */
export function manifestText(manifest: TrainRunManifest): string {
  const text = JSON.stringify(sortKeys(manifest), null, 2).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `${text}\n`;
}

export async function writeManifest(file: string, manifest: TrainRunManifest): Promise<void> {
  manifest.updated_at = utcNow();
  await writeFileAtomic(file, manifestText(manifest));
}

/** POSIX shell quoting as Python's shlex.quote does it: safe words bare, the rest in single quotes. */
export function shellQuote(arg: string): string {
  if (arg === "") return "''";
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'"'"'`)}'`;
}

export function commandLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}
