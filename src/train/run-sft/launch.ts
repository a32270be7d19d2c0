// Finding Prime-RL's launcher and running it with its output teed into `<work-dir>/prime-rl/`.
// Prime-RL is a Python project run from its checkout with `uv run sft ...` (its `sft` entry
// point), so what has to be installed is `uv` on PATH and a synced checkout (--prime-rl-dir).
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, promises as fs } from "node:fs";
import { constants as osConstants } from "node:os";
import path from "node:path";
import { opt } from "../../options.js";

/** What to do when `uv` is missing; made when it is said, so it names the option as the caller does. */
export function installHint(): string {
  return (
    "install uv (https://docs.astral.sh/uv/getting-started/installation/), clone Prime-RL " +
    "(git clone https://github.com/PrimeIntellect-ai/prime-rl), run `uv sync` in the checkout, " +
    `then pass ${opt("primeRlDir")} <checkout>`
  );
}

/** The first executable `name` on the PATH of `env`, as a shell would find it; null if none. */
export async function onPath(name: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    const ok = await fs
      .stat(file)
      .then((s) => s.isFile() && fs.access(file, fs.constants.X_OK).then(() => true))
      .catch(() => false);
    if (ok) return file;
  }
  return null;
}

export interface LaunchOptions {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdoutLog: string;
  stderrLog: string;
  /** Each chunk of the trainer's stdout, as it comes (`--follow`). */
  onStdout?: (chunk: Buffer) => void;
}

/** The trainer's exit status; killed by a signal N reads as -N, as Python's subprocess reports it. */
export async function launch(o: LaunchOptions): Promise<{ returncode: number; error?: string }> {
  const out = createWriteStream(o.stdoutLog);
  const err = createWriteStream(o.stderrLog);
  const [command, ...args] = o.argv as [string, ...string[]];
  // Ctrl-C or a kill of ours goes to the trainer, and we wait for it to end, so the manifest
  // records the run as failed instead of staying "running" forever. Listening starts before the
  // trainer does: a signal that came in between would otherwise end us with the trainer running.
  let child: ChildProcess | null = null;
  const forward = (signal: NodeJS.Signals) => child?.kill(signal);
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, forward);
  const started = spawn(command, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] });
  child = started;
  started.stdout.on("data", (chunk: Buffer) => o.onStdout?.(chunk));
  // The logs are ended by us after `close`, when every chunk has been written to them.
  started.stdout.pipe(out, { end: false });
  started.stderr.pipe(err, { end: false });
  const result = await new Promise<{ returncode: number; error?: string }>((resolve) => {
    started.once("error", (e) => resolve({ returncode: 127, error: e.message }));
    started.once("close", (code, signal) =>
      resolve({ returncode: code ?? -(signal ? (osConstants.signals[signal] ?? 1) : 1) }),
    );
  }).finally(() => {
    for (const s of signals) process.off(s, forward);
  });
  await Promise.all([out, err].map((s) => new Promise((r) => s.end(r))));
  return result;
}
