// One image build through POST /build: the task's environment/ as a tar build context, the log kept
// line by line, and a failure turned into one message that says what to fix. A failure the task
// causes (a RUN that exits non-zero, a FROM image that does not exist) is task_error and never
// retried; an engine that stops answering, a build past its limit or a registry hiccup is
// sandbox_setup, which the job retries.
import { promises as fs } from "node:fs";
import path from "node:path";
import { CategorizedError } from "../../../errors.js";
import { opt } from "../../../options.js";
import type { Task } from "../../../task/types.js";
import { EngineError, readAll } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { entriesOf, type TarEntry, tarStream } from "../engine/tar-write.js";
import { imageFailureKind, isMachineFailure } from "./image-failure.js";

export interface BuildRequest {
  task: Task;
  tag: string;
  labels: Record<string, string>;
  onProgress?: (line: string) => void;
}

export interface BuildOutcome {
  ok: boolean;
  log: string;
  error: string | null;
  /**
   * The error is the engine not answering (unreachable, hung up mid-stream, past the time limit),
   * not an answer from it: nothing about the task is known, so it is the machine's failure.
   */
  transport: boolean;
}

interface BuildMessage {
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
}

const PULL_FAILURE =
  /initializing source|denied|manifest unknown|repository does not exist|failed to resolve|no such host|not found|unauthorized|connection refused|i\/o timeout/i;
const STEP_FAILED = /non-zero code|exit status|exit code|while running/i;

export async function runBuild(engine: Engine, request: BuildRequest): Promise<BuildOutcome> {
  const { task } = request;
  const dockerfile = path.relative(
    task.environmentDir,
    task.dockerfile?.path ?? path.join(task.environmentDir, "Dockerfile"),
  );
  return runContextBuild(engine, {
    tag: request.tag,
    labels: request.labels,
    dockerfile: dockerfile.split(path.sep).join("/"),
    context: await entriesOf(task.environmentDir, ""),
    timeoutSec: task.config.sandbox.buildTimeoutSec,
    onProgress: request.onProgress,
  });
}

export interface ContextBuildRequest {
  tag: string;
  labels: Record<string, string>;
  /** The Dockerfile's path inside the context. */
  dockerfile: string;
  context: TarEntry[];
  timeoutSec: number;
  onProgress?: (line: string) => void;
  /** Dockerfile ARGs (compose's build.args). */
  buildArgs?: Record<string, string>;
}

/** A build from any tar context (task images, and images derived from them). */
export async function runContextBuild(engine: Engine, request: ContextBuildRequest): Promise<BuildOutcome> {
  const lines: string[] = [];
  let error: string | null = null;
  let transport = false;
  const note = (line: string) => {
    lines.push(line);
    request.onProgress?.(line);
  };
  const { timeoutSec } = request;
  const limit = AbortSignal.timeout(timeoutSec * 1000);
  try {
    const res = await engine.client.call("POST", "/build", {
      query: {
        t: request.tag,
        dockerfile: request.dockerfile,
        networkmode: "host",
        rm: 1,
        forcerm: 1,
        labels: JSON.stringify(request.labels),
        buildargs: request.buildArgs ? JSON.stringify(request.buildArgs) : undefined,
      },
      body: tarStream(request.context),
      contentType: "application/x-tar",
      signal: limit,
    });
    let pending = "";
    for await (const chunk of res) {
      pending += (chunk as Buffer).toString("utf8");
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      for (const part of parts) error = handleLine(part, note) ?? error;
    }
    error = handleLine(pending, note) ?? error;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    // An error status is the engine's answer (e.g. Docker refusing a Dockerfile); anything else
    // (the socket gone, the stream cut, our own time limit) says nothing about the task.
    transport = !(err instanceof EngineError);
    error = limit.aborted
      ? `the build ran past build_timeout_sec (${timeoutSec}s); raise build_timeout_sec if it needs longer`
      : transport
        ? `the container engine stopped answering during the build (${msg})`
        : msg;
    note(`ERROR: ${error}\n`);
  }
  return { ok: error === null, log: lines.join(""), error, transport };
}

function handleLine(raw: string, note: (line: string) => void): string | null {
  const line = raw.trim();
  if (!line) return null;
  let msg: BuildMessage;
  try {
    msg = JSON.parse(line) as BuildMessage;
  } catch {
    note(`${line}\n`);
    return null;
  }
  if (msg.stream) note(msg.stream);
  else if (msg.status) note(`${msg.status}${msg.progress ? ` ${msg.progress}` : ""}\n`);
  const error = msg.error ?? msg.errorDetail?.message;
  if (!error) return null;
  note(`ERROR: ${error.trimEnd()}\n`);
  return error.trim();
}

/** The last lines of a build log, for messages. */
function tailOf(log: string, lines = 15): string {
  return log.trimEnd().split("\n").slice(-lines).join("\n");
}

/** One message that says what went wrong and what to change. */
export async function buildFailure(
  task: Task,
  outcome: BuildOutcome,
  logFile?: string,
): Promise<CategorizedError> {
  const error = outcome.error ?? "unknown error";
  const base = task.dockerfile?.baseImage ?? null;
  const where = logFile ? ` (full log: ${logFile})` : "";
  if (outcome.transport) {
    return new CategorizedError(
      "sandbox_setup",
      `task ${task.name}: building its image failed: ${firstLine(error)} (counted as the machine's failure, which ${opt("retryAttempts")} retries)${where}; ` +
        `last lines of the build log:\n${tailOf(outcome.log)}`,
    );
  }
  const stepFailed = STEP_FAILED.test(error);
  if (base && !stepFailed && PULL_FAILURE.test(error)) {
    const missing = imageFailureKind(error) === "missing";
    return new CategorizedError(
      missing ? "task_error" : "sandbox_setup",
      `task ${task.name}: the base image ${base} (FROM in environment/Dockerfile) is not on this machine and could not be pulled: ` +
        `${firstLine(error)} — fix: pull or load ${base} into the engine (docker pull ${base}), or change FROM to an image you have` +
        ` (scripts/setup-podman.sh makes debian:bookworm-slim without a registry)${where}`,
    );
  }
  // A step that exits non-zero, an instruction the engine refuses: the same every time. Only the
  // machine's own trouble outside a step (a full disk, a timeout) is worth another attempt.
  const category = !stepFailed && isMachineFailure(error) ? "sandbox_setup" : "task_error";
  const line = await failingLine(task, error);
  return new CategorizedError(
    category,
    `task ${task.name}: building its image failed: ${firstLine(error)} — fix environment/Dockerfile${line}${where}; ` +
      `last lines of the build log:\n${tailOf(outcome.log)}`,
  );
}

/** " line N" of the instruction that failed, found by its text (Podman and Docker both quote it). */
async function failingLine(task: Task, error: string): Promise<string> {
  const quoted =
    /STEP "(?:RUN\s+)?([^"]+)"/.exec(error) ?? /The command '\/bin\/sh -c (.+?)' returned/.exec(error);
  const needle = quoted?.[1]?.trim().slice(0, 40);
  if (!needle || !task.dockerfile) return "";
  const text = await fs.readFile(task.dockerfile.path, "utf8").catch(() => "");
  const index = text.split("\n").findIndex((l) => l.includes(needle));
  return index < 0 ? "" : ` line ${index + 1}`;
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? text).trim();
}

/** Pulls an image the task names in [sandbox] docker_image when the engine lacks it. */
export async function pullImage(engine: Engine, image: string): Promise<BuildOutcome> {
  const lines: string[] = [];
  let error: string | null = null;
  let transport = false;
  try {
    // Podman answers 200 and puts the registry's refusal in the body; Docker answers 404 or 500.
    const res = await engine.client.call("POST", "/images/create", { query: { fromImage: image } });
    const text = (await readAll(res)).toString("utf8");
    for (const part of text.split("\n")) error = handleLine(part, (l) => lines.push(l)) ?? error;
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
    transport = !(err instanceof EngineError);
  }
  return { ok: error === null, log: lines.join(""), error, transport };
}
