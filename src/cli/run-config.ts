// `bench run --config FILE` (upstream's `--config`/`--run-config`): a YAML file whose keys are the
// run's flags (`jobs_dir`, `agent_env`, `trials`, ... in upstream's snake_case, or as the flags are
// spelled), and `tasks_dir` for the task. The file becomes flags placed before the command line's, so
// a flag typed on the command line wins (the last value of a flag is the one taken; repeatable flags
// such as --agent-env add the file's first). Unknown keys are refused with the nearest flag.
import { readFileSync } from "node:fs";
import type { Command, Option } from "commander";
import { parse } from "yaml";
import { UserInputError } from "../errors.js";
import { nearest } from "../util/nearest.js";

const CONFIG_FLAGS = ["--config", "--run-config"];
/** Keys naming the task or folder of tasks (the positional argument). */
const TASK_KEYS = ["tasks_dir", "tasks-dir", "task", "tasks"];

/**
 * Upstream's flags we do not take, each with what to do instead: a user moving from upstream gets
 * the nearest way here, not "unknown option".
 */
const UPSTREAM_ONLY: Record<string, string> = {
  "--usage-tracking":
    "the gateway records every model call and its usage (result.json usage_source); leave it out",
  "--matrix":
    "run bench run once per model (each into its own --jobs-dir or --job-name); groups never mix models",
  "--max-rollouts": "--include/--exclude choose tasks, --trials N the rollouts of each",
  "--max-sandbox-seconds": "--timeout-multiplier scales each task's own time limits",
  "--worker-concurrency": "--parallel-jobs K runs K repeat jobs at once; -j the trials of a job",
  "--build-concurrency": "-j and --max-concurrent-trials bound the run, image builds included",
};
/** Upstream's remote sandboxes: only this machine's run here. */
const REMOTE_SANDBOXES = ["daytona", "modal", "apple-container", "agentcore", "remote-docker"];

/** Refuses an upstream spelling we do not take, naming the nearest one we do; `--tasks-dir X` is the task. */
function upstreamSpellings(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const [flag, inline] =
      a.startsWith("--") && a.includes("=")
        ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
        : [a, undefined];
    const instead = UPSTREAM_ONLY[flag];
    if (instead) throw new UserInputError(`${flag} is upstream BenchFlow's, not bench run's: ${instead}`);
    const value = inline ?? args[i + 1];
    if (flag === "--sandbox" && value && REMOTE_SANDBOXES.includes(value))
      throw new UserInputError(
        `--sandbox ${value} is upstream's remote sandbox; bench run runs on this machine or a SLURM cluster: --sandbox container (or docker, podman), namespace, or --executor slurm`,
      );
    if (flag === "--tasks-dir") {
      // upstream's spelling of the task argument.
      if (!value)
        throw new UserInputError("--tasks-dir needs a folder: bench run --tasks-dir tasks/half-life ...");
      out.push(value);
      if (inline === undefined) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

/** argv with upstream's spellings read and a `run --config FILE` expanded into flags; any other argv as it is. */
export function expandRunConfig(argv: readonly string[], run: Command): string[] {
  // Only `bench run ...` (node, the script, then the command): a folder named "run" elsewhere is not one.
  const at = 2;
  if (argv[at] !== "run") return [...argv];
  const args = upstreamSpellings(argv.slice(at + 1));
  const found = configPath(args);
  if (!found) return [...argv.slice(0, at + 1), ...args];
  const { file, rest } = found;
  const values = readConfig(file);
  const flags: string[] = [];
  let task: string | null = null;
  for (const [key, value] of Object.entries(values)) {
    if (TASK_KEYS.includes(key)) {
      task = scalar(file, key, value);
      continue;
    }
    flags.push(...flagsOf(file, key, value, run));
  }
  const withTask = task !== null && !hasPositional(rest, run) ? [task] : [];
  return [...argv.slice(0, at + 1), ...withTask, ...flags, ...rest];
}

function configPath(args: string[]): { file: string; rest: string[] } | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const eq = CONFIG_FLAGS.find((f) => a.startsWith(`${f}=`));
    if (eq) return { file: a.slice(eq.length + 1), rest: [...args.slice(0, i), ...args.slice(i + 1)] };
    if (CONFIG_FLAGS.includes(a)) {
      const file = args[i + 1];
      if (!file) throw new UserInputError(`${a} needs a file: bench run --config run.yaml`);
      return { file, rest: [...args.slice(0, i), ...args.slice(i + 2)] };
    }
  }
  return null;
}

function readConfig(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UserInputError(`--config ${file}: cannot read it (${(err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new UserInputError(`--config ${file}: not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new UserInputError(
      `--config ${file}: expected a mapping of the run's flags (agent: opencode, trials: 4, ...)`,
    );
  return doc as Record<string, unknown>;
}

function scalar(file: string, key: string, value: unknown): string {
  if (typeof value === "string" || typeof value === "number") return String(value);
  throw new UserInputError(
    `--config ${file}: ${key}: expected a string or a number, got ${JSON.stringify(value)}`,
  );
}

/** The flags one key stands for, checked against the run command's own options. */
function flagsOf(file: string, key: string, value: unknown, run: Command): string[] {
  const long = `--${key.replace(/_/g, "-")}`;
  const option = run.options.find((o) => o.long === long || o.short === long.slice(1));
  if (!option) {
    const names = run.options
      .map((o) => (o.long ?? "").replace(/^--/, "").replace(/-/g, "_"))
      .filter(Boolean);
    const near = nearest(key.replace(/-/g, "_"), names)[0];
    throw new UserInputError(
      `--config ${file}: ${key} is not a flag of bench run${near ? `: did you mean ${near} (--${near.replace(/_/g, "-")})?` : " (bench run --help lists them)"}`,
    );
  }
  const flag = option.long as string;
  if (!takesValue(option)) {
    if (value === true) return [flag];
    if (value === false || value === null) return [];
    throw new UserInputError(
      `--config ${file}: ${key}: expected true or false, got ${JSON.stringify(value)}`,
    );
  }
  if (value === null) return [];
  // A mapping (agent_env: {K: V}) is the flag once per entry, as K=V.
  if (typeof value === "object" && !Array.isArray(value))
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [
      flag,
      `${k}=${scalar(file, `${key}.${k}`, v)}`,
    ]);
  if (Array.isArray(value)) return value.flatMap((v) => [flag, scalar(file, key, v)]);
  return [flag, scalar(file, key, value)];
}

function takesValue(o: Option): boolean {
  return o.required || o.optional;
}

/** Whether the command line already names the task (a bare argument that is no flag's value). */
function hasPositional(args: string[], run: Command): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--") return i + 1 < args.length;
    if (!a.startsWith("-") || a === "-") return true;
    if (a.includes("=")) continue;
    const option = run.options.find((o) => o.long === a || o.short === a);
    if (option && takesValue(option)) i++;
  }
  return false;
}
