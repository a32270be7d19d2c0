// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose variables are the subject here
// Tasks as their authors meant them, in containers (Podman here; DOCKER_HOST=unix:///run/docker.sock
// for Docker): the image's ENTRYPOINT kept, and environment/docker-compose.yaml run over the engine
// API — sidecars by service name, depends_on and healthchecks awaited, everything removed after.
import assert from "node:assert/strict";
import path from "node:path";
import { after, describe, it } from "node:test";
import { CategorizedError } from "../src/errors.js";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import { LABEL, listContainers, listNetworks } from "../src/sandbox/container/lifecycle/cleanup.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../src/sandbox/container/testing/kit.js";
import type { Task } from "../src/task/types.js";
import { bench, FIXTURES, useScratch } from "./testing/bench.js";

const CT = ["--sandbox", "container"];
const scratch = useScratch("compose");
const made: Task[] = [];
after(() => Promise.all(made.map(removeTaskDir)));

async function task(fixture: Parameters<typeof makeTask>[0]): Promise<Task> {
  const t = await makeTask(fixture);
  made.push(t);
  return t;
}

async function oracleAndNop(name: string): Promise<void> {
  for (const [agent, reward] of [
    ["oracle", "1.0"],
    ["nop", "0.0"],
  ] as const) {
    const jobs = path.join(scratch(), `${name}-${agent}`);
    const run = await bench(["run", path.join(FIXTURES, name), "-a", agent, "--jobs-dir", jobs, ...CT]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`trial-01  reward ${reward.replace(".", "\\.")}`), run.stdout);
  }
}

/** What the engine still holds with this rollout's label. */
async function leftovers(engine: NonNullable<Awaited<ReturnType<typeof engineOrSkip>>>, rollout: string) {
  const label = `${LABEL.rollout}=${rollout}`;
  return {
    containers: (await listContainers(engine, label)).map((c) => c.Id),
    networks: (await listNetworks(engine, label)).map((n) => n.Name),
  };
}

describe("the image's ENTRYPOINT runs, then our command", () => {
  it("entrypoint-service: the service its ENTRYPOINT starts answers at the name it wrote in /etc/hosts (oracle 1.0, nop 0.0)", async (t) => {
    if (!(await engineOrSkip(t))) return;
    await oracleAndNop("entrypoint-service");
  });

  it("an ENTRYPOINT that never runs its arguments, or exits without them, is a sandbox_setup error that says so", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const backend = new ContainerBackend({ setupTimeoutSec: 5 });
    for (const [name, entrypoint, said] of [
      [
        "entrypoint-ignores-args",
        '["sh", "-c", "exec sleep infinity"]',
        /never ran the command it was given/,
      ],
      [
        "entrypoint-exits",
        '["sh", "-c", "echo starting up; exit 3"]',
        /stopped without running the command.*starting up/s,
      ],
    ] as const) {
      const broken = await task({
        name,
        dockerfile: `FROM debian:bookworm-slim\nENTRYPOINT ${entrypoint}\n`,
      });
      const rolloutName = `${name}__${process.pid}`;
      await assert.rejects(
        backend.create({ task: broken, jobName: "compose", rolloutName, network: false }),
        (err: unknown) => {
          assert.ok(err instanceof CategorizedError);
          assert.equal(err.category, "sandbox_setup");
          assert.match(err.message, /the image's ENTRYPOINT \[/);
          assert.match(err.message, /exec "\$@"/);
          assert.match(err.message, said);
          return true;
        },
      );
      assert.deepEqual((await leftovers(engine, rolloutName)).containers, []);
    }
  });
});

describe("environment/docker-compose.yaml", () => {
  it("compose-sidecar: main waits for its healthy sidecar, built from ./api, and reads it by service name (oracle 1.0, nop 0.0)", async (t) => {
    if (!(await engineOrSkip(t))) return;
    await oracleAndNop("compose-sidecar");
  });

  it("a sidecar that never becomes healthy: sandbox_setup naming it and its last health output; no container or network left", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const sick = await task({
      name: "compose-unhealthy",
      dockerfile: "FROM debian:bookworm-slim\n",
      files: {
        "docker-compose.yaml": `services:
  main:
    depends_on:
      db:
        condition: service_healthy
  db:
    image: debian:bookworm-slim
    command: ["sleep", "infinity"]
    healthcheck:
      test: ["CMD-SHELL", "echo db is still warming up; exit 1"]
      interval: 100ms
      retries: 3
`,
      },
    });
    const rolloutName = `compose-unhealthy__${process.pid}`;
    await assert.rejects(
      new ContainerBackend().create({ task: sick, jobName: "compose", rolloutName, network: false }),
      (err: unknown) => {
        assert.ok(err instanceof CategorizedError);
        assert.equal(err.category, "sandbox_setup");
        assert.match(err.message, /compose service db never became healthy/);
        assert.match(err.message, /failed 3 time\(s\) in a row/);
        assert.match(err.message, /last output: db is still warming up/);
        return true;
      },
    );
    assert.deepEqual(await leftovers(engine, rolloutName), { containers: [], networks: [] });
  });

  it("starts services in depends_on order (started, completed_successfully), warns about what it does not apply, and stop() removes all", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const ordered = await task({
      name: "compose-ordered",
      dockerfile: "FROM debian:bookworm-slim\n",
      files: {
        "docker-compose.yaml": `services:
  main:
    depends_on: [cache]
    environment:
      CACHE_HOST: cache
  migrate:
    image: debian:bookworm-slim
    command: sh -c 'echo "migrated"; exit 0'
  cache:
    image: debian:bookworm-slim
    command: ["sleep", "infinity"]
    ports: ["6379:6379"]
    depends_on:
      migrate:
        condition: service_completed_successfully
`,
      },
    });
    const rolloutName = `compose-ordered__${process.pid}`;
    const sandbox = await new ContainerBackend().create({
      task: ordered,
      jobName: "compose",
      rolloutName,
      network: false,
    });
    try {
      assert.ok(
        sandbox.warnings.some((w) => /services\.cache\.ports is not applied/.test(w)),
        sandbox.warnings.join("\n"),
      );
      const seen = await sandbox.exec('echo "$CACHE_HOST"; getent hosts cache >/dev/null && echo resolves', {
        user: "agent",
      });
      assert.equal(seen.stdout, "cache\nresolves\n", seen.stderr);
      const left = await leftovers(engine, rolloutName);
      assert.equal(left.containers.length, 3, "main, cache and the exited migrate");
      assert.equal(left.networks.length, 1);
    } finally {
      await sandbox.stop();
    }
    assert.deepEqual(await leftovers(engine, rolloutName), { containers: [], networks: [] });
  });

  it("awaits an image's own HEALTHCHECK when the file declares none, not counting failures inside its start period", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const warming = await task({
      name: "compose-image-health",
      dockerfile: "FROM debian:bookworm-slim\n",
      files: {
        "docker-compose.yaml": `services:
  main:
    depends_on:
      warm:
        condition: service_healthy
  warm:
    build: ./warm
`,
        // Ready one second after it starts; a single failure after the start period would be fatal.
        "warm/Dockerfile": `FROM debian:bookworm-slim
HEALTHCHECK --interval=200ms --start-period=20s --retries=1 CMD test -f /tmp/up
CMD ["sh", "-c", "sleep 1; touch /tmp/up; exec sleep infinity"]
`,
      },
    });
    const sandbox = await new ContainerBackend().create({
      task: warming,
      jobName: "compose",
      rolloutName: `compose-image-health__${process.pid}`,
      network: false,
    });
    await sandbox.stop();
  });

  it("without network main still reaches its sidecars but not the outside; with network it reaches the outside too", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const pair = await task({
      name: "compose-network",
      dockerfile: "FROM debian:bookworm-slim\n",
      files: {
        "docker-compose.yaml": `services:
  echo:
    image: debian:bookworm-slim
    command: ["perl", "-MIO::Socket::INET", "-e", "my $$s = IO::Socket::INET->new(LocalPort => 9000, Listen => 5, ReuseAddr => 1) or die; while (my $$c = $$s->accept) { print $$c qq(pong\\\\n); close $$c }"]
    healthcheck:
      test: ["CMD", "perl", "-MIO::Socket::INET", "-e", "IO::Socket::INET->new(PeerAddr => '127.0.0.1:9000') or exit 1"]
      interval: 200ms
  main:
    depends_on:
      echo:
        condition: service_healthy
`,
      },
    });
    const probe =
      "exec 3<>/dev/tcp/echo/9000 && head -n 1 <&3; timeout 10 bash -c 'exec 4<>/dev/tcp/deb.debian.org/80' && echo outside || echo no-outside";
    for (const [network, expected] of [
      [false, "pong\nno-outside\n"],
      [true, "pong\noutside\n"],
    ] as const) {
      const sandbox = await new ContainerBackend().create({
        task: pair,
        jobName: "compose",
        rolloutName: `compose-network-${network}__${process.pid}`,
        network,
      });
      try {
        const r = await sandbox.exec(probe, { user: "agent" });
        assert.equal(r.stdout, expected, `network ${network}: ${r.stderr}`);
      } finally {
        await sandbox.stop();
      }
    }
  });

  it("a variable the file needs and nobody sets is a task_error naming it, before anything is built", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const unset = await task({
      name: "compose-unset-var",
      dockerfile: "FROM debian:bookworm-slim\n",
      files: {
        "docker-compose.yaml":
          "services:\n  api:\n    image: debian:bookworm-slim\n    environment:\n      - KEY=${BENCHFLOW_TEST_SURELY_UNSET_VAR}\n",
      },
    });
    await assert.rejects(
      new ContainerBackend().create({
        task: unset,
        jobName: "compose",
        rolloutName: "unset__1",
        network: false,
      }),
      (err: unknown) => {
        assert.ok(err instanceof CategorizedError);
        assert.equal(err.category, "task_error");
        assert.match(
          err.message,
          /docker-compose\.yaml: services\.api\.environment\[0\]: the variable BENCHFLOW_TEST_SURELY_UNSET_VAR is not set/,
        );
        return true;
      },
    );
  });
});
