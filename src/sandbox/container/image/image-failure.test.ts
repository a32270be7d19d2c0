// Which image failures are the task's (task_error, never retried) and which the machine's
// (sandbox_setup, retried), through a stand-in engine on a real unix socket: it answers the way
// Docker does where Podman here cannot (a 404 for a pull), and hangs up where a real engine would
// only do so by crashing. The real engine's answers are checked in image.test.ts.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CategorizedError } from "../../../errors.js";
import type { Task } from "../../../task/types.js";
import { EngineClient, parseEngineUrl } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { makeTask, removeTaskDir } from "../testing/kit.js";
import { buildTaskImage } from "./image.js";
import { imageFailureKind } from "./image-failure.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A stand-in engine: every image is absent, and `onPull` / `onBuild` answer the rest. */
async function fakeEngine(dir: string, handlers: { pull?: Handler; build?: Handler }) {
  const socket = path.join(dir, `engine-${Math.random().toString(16).slice(2)}.sock`);
  const server = http.createServer((req, res) => {
    req.resume();
    const url = req.url ?? "";
    if (req.method === "GET" && url.startsWith("/images/")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "No such image" }));
    } else if (url.startsWith("/images/create") && handlers.pull) handlers.pull(req, res);
    else if (url.startsWith("/build") && handlers.build) handlers.build(req, res);
    else {
      res.writeHead(500);
      res.end("unexpected request");
    }
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  const engine: Engine = {
    client: new EngineClient(parseEngineUrl(`unix://${socket}`)),
    socket: `unix://${socket}`,
    name: "docker",
    version: "test",
    apiVersion: "1.41",
    isPodman: false,
    isLocal: true,
  };
  const close = async () => {
    engine.client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { engine, close };
}

/**
 * Takes the whole request (the build context), writes the first stream lines of an answer, then
 * drops the connection as a crashing engine would.
 */
const hangUpAfter =
  (lines: object[]): Handler =>
  (req, res) => {
    const answer = () => {
      res.writeHead(200, { "content-type": "application/json" });
      for (const line of lines) res.write(`${JSON.stringify(line)}\n`);
      setImmediate(() => req.socket.destroy());
    };
    if (req.complete) answer();
    else req.on("end", answer);
  };

const streamError =
  (message: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`${JSON.stringify({ errorDetail: { message }, error: message })}\n`);
  };

async function categoryOfFailure(p: Promise<unknown>): Promise<{ category: string; message: string }> {
  const err = await p.then(
    () => assert.fail("expected the image to fail"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof CategorizedError, `expected a CategorizedError, got ${String(err)}`);
  return { category: err.category, message: err.message };
}

describe("image failures: the task's or the machine's", () => {
  let dir: string;
  const tasks: Task[] = [];
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-fake-engine-"));
  });
  after(async () => {
    for (const t of tasks) await removeTaskDir(t);
    await fs.rm(dir, { recursive: true, force: true });
  });
  const prebuiltTask = async (image: string) => {
    const t = await makeTask({
      name: "fake-prebuilt",
      dockerfile: "FROM debian:bookworm-slim\n",
      configure: (c) => {
        c.sandbox.dockerImage = image;
      },
    });
    tasks.push(t);
    return t;
  };

  it("an engine that hangs up mid-build is the machine's failure, with the log pointer", async () => {
    const { engine, close } = await fakeEngine(dir, {
      build: hangUpAfter([{ stream: "STEP 1/2: FROM debian:bookworm-slim\n" }]),
    });
    const t = await makeTask({ name: "fake-hangup", dockerfile: "FROM debian:bookworm-slim\nRUN true\n" });
    tasks.push(t);
    const logFile = path.join(dir, "builds/fake-hangup.log");
    try {
      const { category, message } = await categoryOfFailure(buildTaskImage(t, { engine, logFile }));
      assert.equal(category, "sandbox_setup", message);
      assert.match(
        message,
        /^task fake-hangup: building its image failed: the container engine stopped answering/,
      );
      assert.ok(message.includes(logFile), message);
      assert.match(await fs.readFile(logFile, "utf8"), /STEP 1\/2: FROM debian:bookworm-slim/);
    } finally {
      await close();
    }
  });

  it("an engine that hangs up mid-pull is the machine's failure", async () => {
    const { engine, close } = await fakeEngine(dir, {
      pull: hangUpAfter([{ status: "Trying to pull docker.io/library/x:1..." }]),
    });
    try {
      const { category, message } = await categoryOfFailure(
        buildTaskImage(await prebuiltTask("example.org/x:1"), { engine }),
      );
      assert.equal(category, "sandbox_setup", message);
    } finally {
      await close();
    }
  });

  it("Docker's 404 for a pull (repository does not exist) is the task's error", async () => {
    const { engine, close } = await fakeEngine(dir, {
      pull: (_req, res) => {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            message:
              "pull access denied for benchflow-test-no-such-image, repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
          }),
        );
      },
    });
    try {
      const { category, message } = await categoryOfFailure(
        buildTaskImage(await prebuiltTask("benchflow-test-no-such-image:never"), { engine }),
      );
      assert.equal(category, "task_error", message);
      assert.match(message, /^task fake-prebuilt: the image benchflow-test-no-such-image:never /);
      assert.match(message, /pull access denied/);
    } finally {
      await close();
    }
  });

  it("a registry that is busy or failing (429, 503) is the machine's failure", async () => {
    for (const answer of [
      "initializing source docker://example.org/x:1: reading manifest 1 in example.org/x: toomanyrequests: You have reached your pull rate limit",
      "initializing source docker://example.org/x:1: received unexpected HTTP status: 503 Service Unavailable",
    ]) {
      const { engine, close } = await fakeEngine(dir, { pull: streamError(answer) });
      try {
        const { category, message } = await categoryOfFailure(
          buildTaskImage(await prebuiltTask("example.org/x:1"), { engine }),
        );
        assert.equal(category, "sandbox_setup", message);
      } finally {
        await close();
      }
    }
  });
});

describe("imageFailureKind", () => {
  // Podman's own answers on a machine without a registry, and Docker's, verbatim.
  const cases: [string, "missing" | "transient"][] = [
    [
      'initializing source docker://benchflow-test-no-such-image:never: pinging container registry registry-1.docker.io: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: no such host',
      "missing",
    ],
    [
      'initializing source docker://localhost:1/x:1: pinging container registry localhost:1: Get "https://localhost:1/v2/": dial tcp 127.0.0.1:1: connect: connection refused',
      "missing",
    ],
    ["manifest for example.org/x:1 not found: manifest unknown: manifest unknown", "missing"],
    ["normalizing image: normalizing name for compat API: invalid reference format", "missing"],
    [
      'Get "https://registry-1.docker.io/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)',
      "transient",
    ],
    ["dial tcp: lookup registry-1.docker.io: i/o timeout", "transient"],
    ["writing blob: storing blob to file: write /var/tmp/x: no space left on device", "transient"],
    ["something the engine has never said before", "transient"],
  ];
  for (const [message, kind] of cases) {
    it(`${kind}: ${message.slice(0, 60)}`, () => {
      assert.equal(imageFailureKind(message), kind);
    });
  }
});
