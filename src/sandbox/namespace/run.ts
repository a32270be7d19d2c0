// Runs one sandboxed invocation (bwrap or unshare) and collects its result. The tool is the leader
// of its own process group; a timeout or abort SIGKILLs that group, and die-with-parent plus the
// pid namespace take every process started inside down with it. The environment travels through
// fd 3, not argv, so other host users cannot read it in `ps`.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { Tail } from "../../util/tail.js";
import type { ExecResult } from "../types.js";

const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

export interface Invocation {
  argv: string[];
  /** Written to the tool's fd 3 (bwrap --args, or the unshare script's command and environment). */
  input: string;
  /** bwrap --info-fd 4: the namespace's init pid, awaited so that nothing outlives the result. */
  infoFd: boolean;
}

export interface RunOptions {
  env: Record<string, string>;
  timeoutSec?: number | null;
  signal?: AbortSignal;
  maxOutputBytes?: number;
  /** Called with a function that kills the run, so that stop() can end runs still going. */
  onStart?: (kill: () => void) => () => void;
}

export function runContained(invocation: Invocation, options: RunOptions): Promise<ExecResult> {
  const started = performance.now();
  const max = Math.max(0, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  if (options.signal?.aborted) {
    return Promise.resolve({
      exitCode: null,
      stdout: "",
      stderr: "",
      timedOut: false,
      aborted: true,
      durationMs: 0,
    });
  }
  const [file, ...args] = invocation.argv;
  if (file === undefined) throw new Error("runContained: empty argv");

  return new Promise<ExecResult>((resolve, reject) => {
    const stdio = [
      "ignore",
      "pipe",
      "pipe",
      "pipe",
      ...(invocation.infoFd ? ["pipe" as const] : []),
    ] as const;
    const child = spawn(file, args, { detached: true, stdio: [...stdio], env: options.env });
    const stdout = new Tail(max);
    const stderr = new Tail(max);
    child.stdout?.on("data", (b: Buffer) => stdout.push(b));
    child.stderr?.on("data", (b: Buffer) => stderr.push(b));
    const input = child.stdio[3] as Writable;
    input.on("error", () => {}); // The tool may die before reading; its exit status tells.
    input.end(invocation.input);
    let info = "";
    (child.stdio[4] as Readable | undefined)?.on("data", (b: Buffer) => {
      info += b.toString();
    });

    let timedOut = false;
    let aborted = false;
    let killed = false;
    const kill = () => {
      if (killed || child.pid === undefined) return;
      killed = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer =
      options.timeoutSec != null && options.timeoutSec >= 0
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, options.timeoutSec * 1000)
        : undefined;
    const onAbort = () => {
      aborted = true;
      kill();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const unregister = options.onStart?.(onAbort);
    // Nothing outside the namespace can hold our pipes, but never hang if something does.
    let closeGuard: NodeJS.Timeout | undefined;
    child.on("exit", () => {
      closeGuard = setTimeout(() => {
        for (const stream of child.stdio) stream?.destroy();
      }, 5000);
    });

    const finish = () => {
      if (timer) clearTimeout(timer);
      if (closeGuard) clearTimeout(closeGuard);
      options.signal?.removeEventListener("abort", onAbort);
      unregister?.();
    };
    child.on("error", (err) => {
      finish();
      reject(err);
    });
    child.on("close", async (code, signal) => {
      finish();
      await namespaceGone(info);
      resolve({
        exitCode: killed ? null : (code ?? (signal ? 128 + signalNumber(signal) : null)),
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        aborted: aborted && !timedOut,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}

/**
 * bwrap returns as soon as its init reports the exit status; the kernel kills the rest of the
 * namespace before that init turns zombie, so waiting for the zombie means nothing is left.
 */
async function namespaceGone(info: string): Promise<void> {
  const pid = /"child-pid":\s*(\d+)/.exec(info)?.[1];
  if (pid === undefined) return;
  for (let i = 0; i < 5000; i++) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
    if (stat === null) return;
    const state = stat.charAt(stat.lastIndexOf(")") + 2);
    if (state === "Z" || state === "X") return;
    await new Promise((r) => setTimeout(r, 1));
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return (constants.signals as Record<string, number | undefined>)[signal] ?? 0;
}
