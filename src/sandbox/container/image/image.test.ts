// Task images: one build per image even when many rollouts ask at once, a prebuilt image used as is,
// and each kind of failure (Dockerfile error, missing base image, engine down) as ONE message that
// says what to fix. What the task causes is task_error (never retried); what the machine causes
// (the engine down, or hanging up mid-build) is sandbox_setup (retried).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { CategorizedError } from "../../../errors.js";
import type { Task } from "../../../task/types.js";
import { ContainerBackend } from "../backend.js";
import { EngineError } from "../engine/client.js";
import { connectEngine, detectEngine, type Engine } from "../engine/engine.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import { buildTaskImage, imageExists } from "./image.js";

const tasks: Task[] = [];
const images: { engine: Engine; image: string }[] = [];

async function task(fixture: Parameters<typeof makeTask>[0]): Promise<Task> {
  const t = await makeTask(fixture);
  tasks.push(t);
  return t;
}

after(async () => {
  for (const { engine, image } of images) {
    await engine.client
      .send("DELETE", `/images/${encodeURIComponent(image)}`, { query: { force: true } })
      .catch(() => {});
  }
  for (const t of tasks) await removeTaskDir(t);
});

function failureOf(category: "task_error" | "sandbox_setup") {
  return (err: unknown): string => {
    assert.ok(err instanceof CategorizedError, `expected a CategorizedError, got ${String(err)}`);
    assert.equal(err.category, category, err.message);
    return err.message;
  };
}
const taskFailure = failureOf("task_error");
const failure = failureOf("sandbox_setup");

describe("task images", () => {
  it("builds an image once when several rollouts want it at the same time", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const fresh = await task({
      name: "container-dedupe",
      dockerfile: "FROM debian:bookworm-slim\nCOPY nonce.txt /nonce.txt\n",
      files: { "nonce.txt": randomBytes(8).toString("hex") },
    });
    const steps: string[] = [];
    const results = await Promise.all(
      [1, 2, 3].map(() =>
        buildTaskImage(fresh, { engine, onProgress: (line) => line.includes("FROM") && steps.push(line) }),
      ),
    );
    images.push({ engine, image: results[0]?.image ?? "" });
    assert.equal(steps.length, 1, `one build expected, saw: ${steps.join("")}`);
    assert.equal(new Set(results.map((r) => r.image)).size, 1);
    assert.match(results[0]?.image ?? "", /^benchflow-task-container-dedupe:[0-9a-f]{12}$/);
    assert.ok(await imageExists(engine, results[0]?.image ?? ""));
    const later = await buildTaskImage(fresh, { engine });
    assert.equal(later.built, false);
  });

  it("uses a prebuilt image the task names instead of building", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const prebuilt = await task({
      name: "container-prebuilt",
      dockerfile: "FROM debian:bookworm-slim\nRUN exit 1\n",
      configure: (c) => {
        c.sandbox.dockerImage = "debian:bookworm-slim";
      },
    });
    const result = await buildTaskImage(prebuilt, { engine });
    assert.deepEqual([result.image, result.built], ["debian:bookworm-slim", false]);
  });

  it("fails a RUN step that exits non-zero as the task's error, with the log's tail and the file to fix", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const broken = await task({
      name: "container-broken",
      dockerfile: "FROM debian:bookworm-slim\nRUN echo step-ran && no-such-command-xyz\n",
    });
    const logDir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-builds-"));
    const backend = new ContainerBackend({ buildLogDir: logDir });
    const message = await backend
      .create({ task: broken, jobName: "img", rolloutName: "broken__1", network: false })
      .then(() => assert.fail("the build should fail"), taskFailure);
    assert.match(
      message,
      /^task container-broken: building its image failed: .+ — fix environment\/Dockerfile line 2 /,
    );
    assert.match(message, /no-such-command-xyz: (command )?not found/);
    const logFile = path.join(logDir, "container-broken.log");
    assert.ok(message.includes(logFile));
    const log = await fs.readFile(logFile, "utf8");
    assert.match(log, /step-ran/);
    await fs.rm(logDir, { recursive: true, force: true });
  });

  it("names a missing base image and how to get it, as the task's error", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const missing = await task({
      name: "container-nobase",
      dockerfile: "FROM benchflow-test/no-such-base:1\nRUN true\n",
    });
    const message = await buildTaskImage(missing, { engine }).then(
      () => assert.fail("the build should fail"),
      taskFailure,
    );
    assert.match(
      message,
      /^task container-nobase: the base image benchflow-test\/no-such-base:1 \(FROM in environment\/Dockerfile\) is not on this machine and could not be pulled: /,
    );
    assert.match(message, /docker pull benchflow-test\/no-such-base:1/);
    assert.equal(message.split("\n").length, 1);
  });

  it("names a missing prebuilt image and how to get it, as the task's error", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const missing = await task({
      name: "container-noprebuilt",
      dockerfile: "FROM debian:bookworm-slim\n",
      configure: (c) => {
        c.sandbox.dockerImage = "benchflow-test/no-such-prebuilt:2";
      },
    });
    const message = await buildTaskImage(missing, { engine }).then(
      () => assert.fail("should fail"),
      taskFailure,
    );
    assert.match(
      message,
      /^task container-noprebuilt: the image benchflow-test\/no-such-prebuilt:2 \(task\.toml \[environment\] docker_image\) is not on this machine/,
    );
    assert.match(message, / — fix: pull or load benchflow-test\/no-such-prebuilt:2 into the engine/);
  });

  it("refuses a docker_image the engine cannot parse as the task's error", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const bad = await task({
      name: "container-badname",
      dockerfile: "FROM debian:bookworm-slim\n",
      configure: (c) => {
        c.sandbox.dockerImage = "Not An Image";
      },
    });
    const message = await buildTaskImage(bad, { engine }).then(() => assert.fail("should fail"), taskFailure);
    assert.match(
      message,
      /^task container-badname: task\.toml \[environment\] docker_image = "Not An Image" is not an image name/,
    );
    assert.match(message, /— fix: write it as name:tag/);
  });
});

describe("an engine that is down", () => {
  it("says where it looked and what to run, for a missing socket and a refused one", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-noengine-"));
    const notASocket = path.join(dir, "docker.sock");
    await fs.writeFile(notASocket, "");
    for (const socket of [path.join(dir, "absent.sock"), notASocket]) {
      const env = { DOCKER_HOST: `unix://${socket}` };
      const message = await connectEngine(env).then(() => assert.fail("no engine there"), failure);
      assert.match(
        message,
        new RegExp(
          `^DOCKER_HOST=unix://${socket}: no container engine answers at unix://${socket} \\(E[A-Z]+\\)`,
        ),
      );
      assert.match(message, /run scripts\/setup-podman\.sh/);
      const detected = await detectEngine(env);
      assert.deepEqual(detected, { unavailable: message });
    }
    const backend = new ContainerBackend({ dockerHost: `unix://${notASocket}` });
    assert.match((await backend.unavailableReason()) ?? "", /scripts\/setup-podman\.sh/);
    const t = await task({ name: "container-noengine", dockerfile: "FROM debian:bookworm-slim\n" });
    const message = await backend
      .create({ task: t, jobName: "x", rolloutName: "x__1", network: false })
      .then(() => assert.fail("no engine"), failure);
    assert.match(message, /no container engine answers/);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("refuses a DOCKER_HOST it cannot speak to, saying which forms work", async () => {
    const message = await connectEngine({ DOCKER_HOST: "ssh://user@box" }).then(
      () => assert.fail("unsupported"),
      failure,
    );
    assert.match(
      message,
      /DOCKER_HOST=ssh:\/\/user@box is not supported: use unix:\/\/\/path\/to\/socket or tcp:\/\/host:port/,
    );
  });

  it("reports engine errors with the engine's own message", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const err = await engine.client
      .send("GET", "/containers/benchflow-no-such-container/json")
      .catch((e) => e);
    assert.ok(err instanceof EngineError);
    assert.equal(err.status, 404);
    assert.match(err.message, /no such container/i);
  });
});
