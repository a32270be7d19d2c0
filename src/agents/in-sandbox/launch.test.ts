// The in-sandbox launch script, run by real bash with a stand-in agent binary: config files and
// skills land under $HOME, the instruction arrives verbatim, a gateway that does not answer is an
// infrastructure failure before the agent starts, and the relay carries traffic out of a netns.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { promises as fs } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { INSTRUCTION, type LaunchPlan, launchScript, SETUP_FAILED, TASK_FAILED } from "./launch.js";
import { startSocketRelay } from "./relay.js";

let root: string;
let server: net.Server;
let port: number;

before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bf-launch-"));
  // A stand-in gateway: answers "pong <what it read>" on each connection.
  server = net.createServer((c) => c.once("data", (d) => c.end(`pong ${String(d).trim()}\n`)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as net.AddressInfo).port;
});
after(async () => {
  await new Promise((r) => server.close(r));
  await fs.rm(root, { recursive: true, force: true });
});

async function fakeAgent(dir: string, body: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const bin = path.join(dir, "agent");
  await fs.writeFile(bin, `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  return bin;
}

function plan(over: Partial<LaunchPlan> & { binary: string }): LaunchPlan {
  return {
    binDir: path.join(root, "bin"),
    loader: null,
    args: [],
    configFiles: [],
    stagedSkills: null,
    taskSkillsDir: null,
    skillsHome: ".agent/skills",
    gateway: { host: "127.0.0.1", port },
    relay: null,
    declareAgent: false,
    logDir: path.join(root, "logs"),
    stdoutFile: "out.jsonl",
    stderrFile: "err.txt",
    ...over,
  };
}

function run(
  script: string,
  env: Record<string, string>,
  wrap: string[] = [],
): Promise<{ code: number | null; stderr: string }> {
  const argv = [...wrap, "bash", "-c", script];
  const child = spawn(argv[0] as string, argv.slice(1), {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe("launch script", () => {
  it("writes config files and skills under $HOME, puts bin/ first on PATH, passes the instruction verbatim", async () => {
    const home = path.join(root, "home1");
    const skills = path.join(root, "staged");
    await fs.mkdir(path.join(skills, "greeting"), { recursive: true });
    await fs.writeFile(path.join(skills, "greeting", "SKILL.md"), "# greeting\n");
    await fs.mkdir(path.join(root, "logs"), { recursive: true });
    const bin = await fakeAgent(
      path.join(root, "a1"),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
      'printf "%s\\n" "$@"; echo "path=${PATH%%:*}" >&2; exit 3',
    );
    const instruction = `Write "it's" $(rm -rf /) \`x\` $HOME\nsecond line`;
    const config = 'model = "m"\n# $HOME stays literal, as does `this` and \\n\n';
    const script = launchScript(
      plan({
        binary: bin,
        args: ["--flag", INSTRUCTION, "it's"],
        configFiles: [{ path: ".cfg/app/config.toml", content: config }],
        stagedSkills: skills,
      }),
    );
    const res = await run(script, { HOME: home, BF_INSTRUCTION: instruction });
    assert.equal(res.code, 3, res.stderr);
    assert.equal(await fs.readFile(path.join(home, ".cfg/app/config.toml"), "utf8"), config);
    assert.equal(
      await fs.readFile(path.join(home, ".agent/skills/greeting/SKILL.md"), "utf8"),
      "# greeting\n",
    );
    assert.equal(
      await fs.readFile(path.join(root, "logs/out.jsonl"), "utf8"),
      `--flag\n${instruction}\nit's\n`,
    );
    assert.equal(
      await fs.readFile(path.join(root, "logs/err.txt"), "utf8"),
      `path=${path.join(root, "bin")}\n`,
    );
  });

  it("copies the task's skills_dir into the agent's skills folder; a staged skill of the same name wins", async () => {
    const home = path.join(root, "home-skills");
    const taskDir = path.join(root, "image-skills");
    const staged = path.join(root, "staged-skills");
    for (const [dir, name, text] of [
      [taskDir, "greeting", "task greeting\n"],
      [taskDir, "farewell", "task farewell\n"],
      [staged, "greeting", "run greeting\n"],
    ] as const) {
      await fs.mkdir(path.join(dir, name), { recursive: true });
      await fs.writeFile(path.join(dir, name, "SKILL.md"), text);
    }
    await fs.mkdir(path.join(root, "logs"), { recursive: true });
    const bin = await fakeAgent(path.join(root, "a-skills"), "exit 0");
    const script = launchScript(plan({ binary: bin, taskSkillsDir: taskDir, stagedSkills: staged }));
    const res = await run(script, { HOME: home, BF_INSTRUCTION: "x" });
    assert.equal(res.code, 0, res.stderr);
    const read = (name: string) => fs.readFile(path.join(home, ".agent/skills", name, "SKILL.md"), "utf8");
    assert.equal(await read("farewell"), "task farewell\n");
    assert.equal(await read("greeting"), "run greeting\n");
  });

  it("fails with TASK_FAILED, naming the fix, when the task's skills_dir is not in the sandbox", async () => {
    const marker = path.join(root, "started-skills");
    const bin = await fakeAgent(path.join(root, "a-noskills"), `touch ${marker}`);
    const missing = path.join(root, "no-such-skills");
    const res = await run(launchScript(plan({ binary: bin, taskSkillsDir: missing })), {
      HOME: root,
      BF_INSTRUCTION: "x",
    });
    assert.equal(res.code, TASK_FAILED);
    assert.match(res.stderr, /benchflow: the task's skills_dir .*no-such-skills is not a folder.*COPY/);
    assert.equal(await fs.stat(marker).catch(() => null), null, "the agent never ran");
  });

  it("fails with SETUP_FAILED before the agent starts when the gateway does not answer", async () => {
    const marker = path.join(root, "started");
    const bin = await fakeAgent(path.join(root, "a2"), `touch ${marker}`);
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const res = await run(
      launchScript(plan({ binary: bin, gateway: { host: "127.0.0.1", port: deadPort } })),
      { HOME: root, BF_INSTRUCTION: "x" },
    );
    assert.equal(res.code, SETUP_FAILED);
    assert.match(
      res.stderr,
      new RegExp(`benchflow: cannot reach the model gateway at http://127.0.0.1:${deadPort}`),
    );
    assert.equal(await fs.stat(marker).catch(() => null), null, "the agent never ran");
  });

  it("fails with SETUP_FAILED when the agent binary is missing", async () => {
    const res = await run(launchScript(plan({ binary: path.join(root, "nope/agent") })), {
      HOME: root,
      BF_INSTRUCTION: "x",
    });
    assert.equal(res.code, SETUP_FAILED);
    assert.match(res.stderr, /benchflow: the agent binary .* is missing/);
  });

  it("fails with SETUP_FAILED, naming the C library, when the image lacks the loader a glibc binary needs", async () => {
    const bin = await fakeAgent(path.join(root, "a4"), "exit 0");
    const res = await run(launchScript(plan({ binary: bin, loader: path.join(root, "no-ld.so") })), {
      HOME: root,
      BF_INSTRUCTION: "x",
    });
    assert.equal(res.code, SETUP_FAILED);
    assert.match(res.stderr, /benchflow: the agent's bundle cannot run in this image: it needs glibc/);
  });

  it("reaches the gateway from a network namespace with only loopback, through the relay", async (t) => {
    const probe = spawnSync("unshare", ["-n", "true"]);
    if (probe.status !== 0) return t.skip("cannot make a network namespace here");
    const relay = await startSocketRelay(port);
    try {
      const out = path.join(root, "relay-out");
      // The agent talks to 127.0.0.1:<port> inside its own namespace, where nothing else listens.
      const bin = await fakeAgent(
        path.join(root, "a3"),
        `exec 3<>/dev/tcp/127.0.0.1/${port}; echo ping >&3; cat <&3 > ${out}`,
      );
      const script = launchScript(
        plan({
          binary: bin,
          relay: { node: process.execPath, socket: path.join(relay.dir, "gateway.sock") },
        }),
      );
      const res = await run(
        `ip link set lo up; ${script}`,
        { HOME: root, BF_INSTRUCTION: "x", TMPDIR: root },
        ["unshare", "-n"],
      );
      assert.equal(res.code, 0, res.stderr);
      assert.equal(await fs.readFile(out, "utf8"), "pong ping\n");
    } finally {
      await relay.close();
    }
    assert.equal(await fs.stat(relay.dir).catch(() => null), null, "the relay folder is removed on close");
  });
});
