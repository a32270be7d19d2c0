// One command in a running container through exec create/start/inspect. A timeout or abort kills
// the whole process tree: each exec runs in a session of its own under a leader whose command line
// carries a marker (readable by root even when the exec runs as the agent, unlike its environment),
// and a root exec kills every process in that session or below the leader.
import { randomBytes } from "node:crypto";
import { Tail } from "../../../util/tail.js";
import type { ExecResult } from "../../types.js";
import { EngineError, readAll } from "./client.js";
import type { Engine } from "./engine.js";

export interface ContainerExecOptions {
  user: string;
  env: Record<string, string>;
  cwd: string;
  timeoutSec?: number | null;
  signal?: AbortSignal;
  maxOutputBytes?: number;
}

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const MARKER_PREFIX = "benchflow-exec-";

// The leader stays a shell (the command is its child, never exec'd into it), so the marker in its
// argv lives as long as the command does. Images without setsid keep the marker, not the session;
// so do busybox images, whose setsid (an applet, or a symlink to busybox) has no -w.
const LEADER = 'bash -c "$1"; exit $?';
// Every exec's processes are the kernel's first choice when the container runs out of memory, before
// its keep-alive (adjustment 0): were that killed, the container would stop and the rollout go
// unscored. Raising one's own adjustment needs no privilege.
const OOM_FIRST = "{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; ";
const LAUNCH = `${OOM_FIRST}p=$(command -v setsid 2>/dev/null); case "$p" in /*) [ -L "$p" ] || exec setsid -w bash -c '${LEADER}' "$0" "$1";; esac; exec bash -c '${LEADER}' "$0" "$1"`;

// Lists pid, ppid and session of every process; kills the marked ones, their sessions and their
// descendants; three rounds catch processes forked meanwhile (or not yet visible at the first).
function killScript(hex: string): string {
  return [
    // Split so that this script's own command line does not carry the marker.
    `m='${MARKER_PREFIX}'"${hex}"`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
    "init_sid=$(s=$(cat /proc/1/stat); s=${s##*) }; set -- $s; echo $4)",
    "for round in 1 2 3; do",
    '  table=""; marked=" "; sids=" "',
    "  for d in /proc/[0-9]*; do",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
    '    s=$(cat "$d/stat" 2>/dev/null) || continue; p=${d#/proc/}; s=${s##*) }; set -- $s',
    '    table="$table$p $2 $4;"',
    "    if tr '\\0' ' ' < \"$d/cmdline\" 2>/dev/null | grep -qF \"$m\"; then",
    '      marked="$marked$p "; [ "$4" != 0 ] && [ "$4" != "$init_sid" ] && sids="$sids$4 "',
    "    fi",
    "  done",
    '  targets="$marked"',
    "  for pass in 1 2 3 4; do",
    '    rest="$table"',
    '    while [ -n "$rest" ]; do',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
    "      row=${rest%%;*}; rest=${rest#*;}; set -- $row",
    '      case "$targets" in *" $1 "*) continue;; esac',
    '      case "$sids$targets" in *" $3 "*|*" $2 "*) targets="$targets$1 ";; esac',
    "    done",
    "  done",
    // Stopped first, then killed: a shell whose child dies before the shell itself would otherwise
    // run its next command (an `echo` after a killed `sleep`) in the moment between the two kills.
    "  kill -STOP $targets 2>/dev/null",
    "  kill -9 $targets 2>/dev/null",
    "  sleep 0.1",
    "done; true",
  ].join("\n");
}

/** Splits Docker's multiplexed raw stream (8-byte frame headers) into stdout and stderr. */
function demux(onFrame: (stream: number, data: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      onFrame(pending[0] ?? 1, pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
  };
}

async function createExec(
  engine: Engine,
  id: string,
  argv: string[],
  user: string,
  env: string[],
  cwd?: string,
) {
  const body = { Cmd: argv, User: user, Env: env, WorkingDir: cwd, AttachStdout: true, AttachStderr: true };
  return (await engine.client.json<{ Id: string }>("POST", `/containers/${id}/exec`, { json: body })).Id;
}

/** Runs argv to completion and returns its exit code, ignoring output (setup steps, kills). */
export async function execQuiet(
  engine: Engine,
  id: string,
  argv: string[],
  user = "root",
): Promise<number | null> {
  const execId = await createExec(engine, id, argv, user, []);
  const res = await engine.client.call("POST", `/exec/${execId}/start`, {
    json: { Detach: false, Tty: false },
  });
  await readAll(res);
  return (await engine.client.json<{ ExitCode: number | null }>("GET", `/exec/${execId}/json`)).ExitCode;
}

export async function execInContainer(
  engine: Engine,
  id: string,
  command: string,
  options: ContainerExecOptions,
): Promise<ExecResult> {
  const started = Date.now();
  if (options.signal?.aborted) {
    return { exitCode: null, stdout: "", stderr: "", timedOut: false, aborted: true, durationMs: 0 };
  }
  const hex = randomBytes(8).toString("hex");
  const env = Object.entries(options.env).map(([k, v]) => `${k}=${v}`);
  const argv = ["sh", "-c", LAUNCH, `${MARKER_PREFIX}${hex}`, command];
  const execId = await createExec(engine, id, argv, options.user, env, options.cwd);
  // Aborted while the exec was being created (no listener yet to hear it): it never starts.
  if (options.signal?.aborted) {
    return {
      exitCode: null,
      stdout: "",
      stderr: "",
      timedOut: false,
      aborted: true,
      durationMs: Date.now() - started,
    };
  }
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const stdout = new Tail(max);
  const stderr = new Tail(max);
  let timedOut = false;
  let aborted = false;
  let killing: Promise<unknown> | null = null;
  let stream: (NodeJS.ReadableStream & { destroy(): void }) | null = null;
  const stopTree = () => {
    killing ??= execQuiet(engine, id, ["sh", "-c", killScript(hex)])
      .catch(() => undefined)
      // A process that escaped the kill but holds the output open must not hold the rollout too.
      .then(() => setTimeout(() => stream?.destroy(), 5000).unref());
  };
  const timer =
    options.timeoutSec != null
      ? setTimeout(() => {
          timedOut = true;
          stopTree();
        }, options.timeoutSec * 1000)
      : null;
  const onAbort = () => {
    aborted = true;
    stopTree();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await engine.client.call("POST", `/exec/${execId}/start`, {
      json: { Detach: false, Tty: false },
    });
    stream = res;
    const feed = demux((kind, data) => (kind === 2 ? stderr : stdout).push(data));
    for await (const chunk of res) feed(chunk as Buffer);
  } catch (err) {
    if (!killing) throw err;
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  if (killing) await killing;
  const killed = timedOut || aborted;
  return {
    exitCode: killed ? null : await exitCodeOf(engine, execId),
    stdout: stdout.text(),
    stderr: stderr.text(),
    timedOut,
    aborted: aborted && !timedOut,
    durationMs: Date.now() - started,
  };
}

async function exitCodeOf(engine: Engine, execId: string): Promise<number | null> {
  try {
    return (await engine.client.json<{ ExitCode: number | null }>("GET", `/exec/${execId}/json`)).ExitCode;
  } catch (err) {
    // The container went away under the exec (stopped meanwhile): there is no exit code to report.
    if (err instanceof EngineError && err.status === 404) return null;
    throw err;
  }
}
