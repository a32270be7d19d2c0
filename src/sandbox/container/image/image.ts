// Task images: tagged by the digest of environment/, so a task is built once and reused across
// rollouts and jobs until its files change. Builds share one concurrency limit, and concurrent
// requests for the same image wait on the one build in flight.
import { promises as fs } from "node:fs";
import path from "node:path";
import { CategorizedError } from "../../../errors.js";
import { taskDigest } from "../../../task/digest.js";
import type { Task } from "../../../task/types.js";
import { writeFileAtomic } from "../../../util/fs.js";
import { Limiter } from "../../../util/limit.js";
import { EngineError } from "../engine/client.js";
import { connectEngine, type Engine } from "../engine/engine.js";
import { buildFailure, pullImage, runBuild } from "./build.js";
import { imageFailureKind } from "./image-failure.js";

export interface BuildTaskImageOptions {
  engine?: Engine;
  /** Where the build log goes, e.g. <job>/builds/<task>.log. */
  logFile?: string;
  onProgress?: (line: string) => void;
  /** Build even when the tagged image exists. */
  force?: boolean;
}

export interface TaskImage {
  image: string;
  /** False when an existing image was reused (or the task names a prebuilt one). */
  built: boolean;
  log: string;
}

const builds = new Limiter(2);
const inFlight = new Map<string, Promise<TaskImage>>();

/** How many image builds may run at once in this process (default 2). */
export function setBuildConcurrency(n: number): void {
  builds.setLimit(n);
}

export async function imageTagOf(task: Task): Promise<string> {
  const digest = (await taskDigest(task.environmentDir)).replace(/^sha256:/, "");
  const name = task.name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 100);
  return `benchflow-task-${name || "task"}:${digest.slice(0, 12)}`;
}

export async function imageExists(engine: Engine, image: string): Promise<boolean> {
  try {
    await engine.client.send("GET", `/images/${encodeURIComponent(image)}/json`);
    return true;
  } catch (err) {
    if (err instanceof EngineError && err.status === 404) return false;
    throw err;
  }
}

/** The image a task's rollouts run in: its prebuilt docker_image, or environment/ built (once). */
export async function buildTaskImage(task: Task, options: BuildTaskImageOptions = {}): Promise<TaskImage> {
  const engine = options.engine ?? (await connectEngine());
  const prebuilt = task.config.sandbox.dockerImage;
  if (prebuilt) return usePrebuilt(engine, task, prebuilt, options.logFile);
  const tag = await imageTagOf(task);
  const key = `${engine.socket} ${tag}`;
  let pending = inFlight.get(key);
  if (!pending) {
    pending = builds.run(() => buildOnce(engine, task, tag, options));
    inFlight.set(key, pending);
    void pending.finally(() => inFlight.delete(key)).catch(() => undefined);
  }
  const result = await pending;
  // A caller that joined another's build still gets its own log file.
  if (options.logFile) await saveLog(options.logFile, result.log);
  return result;
}

async function buildOnce(
  engine: Engine,
  task: Task,
  tag: string,
  options: BuildTaskImageOptions,
): Promise<TaskImage> {
  if (!options.force && (await imageExists(engine, tag))) {
    return { image: tag, built: false, log: `image ${tag} exists (environment/ unchanged); reused\n` };
  }
  const labels = { "benchflow.task": task.name, "benchflow.environment": tag.split(":")[1] ?? "" };
  const outcome = await runBuild(engine, { task, tag, labels, onProgress: options.onProgress });
  if (!outcome.ok) {
    if (options.logFile) await saveLog(options.logFile, outcome.log);
    throw await buildFailure(task, outcome, options.logFile);
  }
  return { image: tag, built: true, log: outcome.log };
}

async function usePrebuilt(engine: Engine, task: Task, image: string, logFile?: string): Promise<TaskImage> {
  const field =
    task.layout === "native" ? "task.md sandbox.docker_image" : "task.toml [environment] docker_image";
  const present = await imageExists(engine, image).catch((err: unknown) => {
    if (err instanceof EngineError && /invalid reference format/i.test(err.message)) {
      throw new CategorizedError(
        "task_error",
        `task ${task.name}: ${field} = ${JSON.stringify(image)} is not an image name the engine accepts (${err.message}) — fix: write it as name:tag in lower case, e.g. debian:bookworm-slim`,
      );
    }
    throw err;
  });
  if (present) return { image, built: false, log: `prebuilt image ${image} present\n` };
  const outcome = await pullImage(engine, image);
  if (logFile) await saveLog(logFile, outcome.log);
  if (outcome.ok && (await imageExists(engine, image))) return { image, built: false, log: outcome.log };
  // The registry saying the image is not there (or will not give it) repeats on every attempt: the
  // task as written cannot run. An engine that did not answer, or a registry hiccup, may pass.
  const error = outcome.error ?? "the engine reported no error but the image is not there after the pull";
  const category =
    !outcome.transport && imageFailureKind(error) === "missing" ? "task_error" : "sandbox_setup";
  throw new CategorizedError(
    category,
    `task ${task.name}: the image ${image} (${field}) is not on this machine and could not be pulled: ` +
      `${error.split("\n")[0]?.trim()} — fix: pull or load ${image} into the engine (docker pull ${image}), ` +
      `correct docker_image, or remove it to build environment/Dockerfile`,
  );
}

async function saveLog(file: string, log: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, log);
}
