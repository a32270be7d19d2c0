// A sidecar's image: its build context built once per content (tagged by the digest of the
// context, the Dockerfile's name and the build args, like task images) or its named image, pulled
// if the engine lacks it. Concurrent rollouts of one task wait on the one build in flight.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { CategorizedError } from "../../../errors.js";
import { taskDigest } from "../../../task/digest.js";
import type { Task } from "../../../task/types.js";
import { writeFileAtomic } from "../../../util/fs.js";
import type { Engine } from "../engine/engine.js";
import { entriesOf } from "../engine/tar-write.js";
import { pullImage, runContextBuild } from "../image/build.js";
import { imageExists } from "../image/image.js";
import type { ComposeService } from "./model.js";

const inFlight = new Map<string, Promise<string>>();

export interface ServiceImageOptions {
  /** Build logs go to <logDir>/<task>.<service>.log. */
  logDir?: string;
}

/** The image a sidecar runs: built from its context (once) or its image:, pulled when missing. */
export async function serviceImage(
  engine: Engine,
  task: Task,
  service: ComposeService,
  options: ServiceImageOptions = {},
): Promise<string> {
  const tag = service.build ? await buildTag(task, service) : (service.image as string);
  const key = `${engine.socket} ${tag}`;
  let pending = inFlight.get(key);
  if (!pending) {
    pending = service.build
      ? buildOnce(engine, task, service, tag, options)
      : pullIfMissing(engine, task, service, tag);
    inFlight.set(key, pending);
    void pending.finally(() => inFlight.delete(key)).catch(() => undefined);
  }
  return pending;
}

async function buildTag(task: Task, service: ComposeService): Promise<string> {
  const build = service.build as NonNullable<ComposeService["build"]>;
  const digest = createHash("sha256")
    .update(await taskDigest(build.context))
    .update(`\0${build.dockerfile}\0${JSON.stringify(build.args)}`)
    .digest("hex");
  const name = `${task.name}-${service.name}`
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 100);
  return `benchflow-svc-${name || "service"}:${digest.slice(0, 12)}`;
}

async function buildOnce(
  engine: Engine,
  task: Task,
  service: ComposeService,
  tag: string,
  options: ServiceImageOptions,
): Promise<string> {
  if (await imageExists(engine, tag)) return tag;
  const build = service.build as NonNullable<ComposeService["build"]>;
  const where = `services.${service.name}.build`;
  if (!(await fs.stat(path.join(build.context, build.dockerfile)).catch(() => null))?.isFile()) {
    throw new CategorizedError(
      "task_error",
      `task ${task.name}: ${where}: there is no ${build.dockerfile} in ${path.relative(task.dir, build.context) || "."} — fix the compose file's build.context or build.dockerfile`,
    );
  }
  const outcome = await runContextBuild(engine, {
    tag,
    labels: { "benchflow.task": task.name, "benchflow.service": service.name },
    dockerfile: build.dockerfile,
    context: await entriesOf(build.context, ""),
    timeoutSec: task.config.sandbox.buildTimeoutSec,
    buildArgs: build.args,
  });
  const logFile = options.logDir ? path.join(options.logDir, `${task.name}.${service.name}.log`) : null;
  if (logFile) {
    await fs.mkdir(path.dirname(logFile), { recursive: true });
    await writeFileAtomic(logFile, outcome.log);
  }
  if (outcome.ok) return tag;
  const tail = outcome.log.trimEnd().split("\n").slice(-15).join("\n");
  throw new CategorizedError(
    outcome.transport ? "sandbox_setup" : "task_error",
    `task ${task.name}: building the image of compose service ${service.name} failed: ${(outcome.error ?? "").split("\n")[0]}` +
      `${outcome.transport ? "" : ` — fix ${path.relative(task.dir, path.join(build.context, build.dockerfile))}`}` +
      `${logFile ? ` (full log: ${logFile})` : ""}; last lines of the build log:\n${tail}`,
  );
}

async function pullIfMissing(
  engine: Engine,
  task: Task,
  service: ComposeService,
  image: string,
): Promise<string> {
  if (await imageExists(engine, image)) return image;
  const outcome = await pullImage(engine, image);
  if (outcome.ok && (await imageExists(engine, image))) return image;
  throw new CategorizedError(
    outcome.transport ? "sandbox_setup" : "task_error",
    `task ${task.name}: the image ${image} of compose service ${service.name} is not on this machine and could not be pulled: ` +
      `${(outcome.error ?? "not there after the pull").split("\n")[0]} — fix: load it into the engine (docker pull ${image}) or give the service a build:`,
  );
}
