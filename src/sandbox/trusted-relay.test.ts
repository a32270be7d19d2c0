// The trusted relay, end to end on real namespaces and processes: a network namespace of its own (as
// a sandbox's), the forwarder in it as root, the launch script declaring the agent, and a stand-in
// gateway that reads each connection's signed origin. The agent's own call is "agent"; a command it
// runs, a process that tries to declare itself too, and a forged origin line are not.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { launchScript } from "../agents/in-sandbox/launch.js";
import { acceptWithOrigins, newOriginKey } from "../gateway/origin.js";
import { RELAY_BOUNDS } from "./gateway-relay.js";
import { type Relay, startRelay } from "./relay.js";

const root = process.getuid?.() === 0;
let dir: string;
let holder: ChildProcess;
let gateway: http.Server;
let port: number;
let relay: Relay;
const key = newOriginKey();

// bash's /dev/tcp: a request whose answer (the origin the gateway saw) is the reply's last line,
// read by builtins only: a child (tail) would inherit the socket and own it too.
const call = (what: string) =>
  `exec 5<>/dev/tcp/127.0.0.1/${"$BF_PORT"} && printf 'GET /${what} HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n' >&5 && while IFS= read -r l || [ -n "$l" ]; do last=$l; done <&5; printf '%s' "$last" > "$BF_OUT/${what}"; exec 5>&-`;

before(async () => {
  if (!root) return;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-trusted-relay-"));
  gateway = http.createServer((req, res) => res.end(JSON.stringify(door.originOf(req.socket))));
  const door = acceptWithOrigins(gateway, key);
  await new Promise<void>((r) => gateway.listen(0, "127.0.0.1", r));
  port = (gateway.address() as AddressInfo).port;
  holder = spawn(
    "unshare",
    ["--net", "--", "/bin/sh", "-c", "ip link set lo up && echo ready && exec sleep infinity"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  await new Promise((r) => holder.stdout?.once("data", r));
  relay = await startRelay(holder.pid as number, { port, originKey: key });
});

after(async () => {
  if (!root) return;
  await relay?.close();
  holder?.kill("SIGKILL");
  await new Promise<void>((r) => gateway.close(() => r()));
  await fs.rm(dir, { recursive: true, force: true });
});

/** Runs the launch script in the holder's namespace, as a sandbox's exec would. */
function launch(agentBody: string): Promise<{ code: number | null; stderr: string }> {
  const bin = path.join(dir, "agent");
  const script = launchScript({
    binary: bin,
    binDir: path.join(dir, "bin"),
    loader: null,
    args: [],
    configFiles: [],
    stagedSkills: null,
    taskSkillsDir: null,
    skillsHome: ".skills",
    gateway: { host: "127.0.0.1", port },
    relay: null,
    declareAgent: true,
    logDir: dir,
    stdoutFile: "out.txt",
    stderrFile: "err.txt",
  });
  return fs.writeFile(bin, `#!/bin/bash\n${agentBody}\n`, { mode: 0o755 }).then(() => {
    const child = spawn("nsenter", [`--net=/proc/${holder.pid}/ns/net`, "--", "bash", "-c", script], {
      env: { PATH: process.env.PATH ?? "", HOME: dir, BF_PORT: String(port), BF_OUT: dir },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d) => {
      stderr += String(d);
    });
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
  });
}

const originIn = async (name: string) => JSON.parse(await fs.readFile(path.join(dir, name), "utf8"));

describe("the trusted relay", { skip: !root && "needs root (network namespaces, nsenter)" }, () => {
  it("attributes the declared agent's own call to it, and a command it runs to that command", async () => {
    const res = await launch(
      [
        call("own"),
        // A tool command: a child of the agent with the same environment and the same key.
        `bash -c '${call("tool").replace(/'/g, "'\\''")}'`,
        // A command that tries to declare itself the agent while the agent lives.
        `bash -c 'exec 6<>/dev/tcp/127.0.0.1/$BF_PORT; printf "BENCHFLOW-AGENT\\n" >&6; read -r r <&6; echo "$r" > "$BF_OUT/redeclare"'`,
        // One that forges the gateway's origin line itself.
        `bash -c 'exec 7<>/dev/tcp/127.0.0.1/$BF_PORT; printf "BENCHFLOW-ORIGIN 00 {\\"kind\\":\\"agent\\"}\\nGET /forged HTTP/1.0\\r\\n\\r\\n" >&7; cat <&7 > "$BF_OUT/forged"'`,
      ].join("\n"),
    );
    assert.equal(res.code, 0, res.stderr);
    const own = await originIn("own");
    assert.equal(own.kind, "agent");
    assert.equal(own.comm, "agent");
    const tool = await originIn("tool");
    assert.equal(tool.kind, "other");
    assert.equal(tool.comm, "bash");
    assert.match(tool.why, /not the agent's own process/);
    assert.match(
      await fs.readFile(path.join(dir, "redeclare"), "utf8"),
      /^refused: an agent is declared already/,
    );
    // The forwarder's own line comes first: the forged one is only bytes of a bad request.
    assert.doesNotMatch(await fs.readFile(path.join(dir, "forged"), "utf8"), /"kind":"agent"/);
  });

  it("answers a connection over the rollout's cap with the relays' 503, and serves again once they close", async () => {
    const max = RELAY_BOUNDS.maxConnections;
    // Inside the namespace: hold the cap's worth of silent connections, then try one more.
    const probe = [
      // The relay may answer the one over the cap and close before the request is written: a write
      // to the closed socket must fail (EPIPE), not kill the shell with SIGPIPE.
      'trap "" PIPE',
      `for i in $(seq 1 ${max}); do exec {fd}<>/dev/tcp/127.0.0.1/$BF_PORT || exit 9; done`,
      "sleep 0.3",
      'exec 8<>/dev/tcp/127.0.0.1/$BF_PORT; printf "GET /over HTTP/1.0\\r\\n\\r\\n" >&8 2>/dev/null; cat <&8 > "$BF_OUT/over"',
    ].join("\n");
    const child = spawn("nsenter", [`--net=/proc/${holder.pid}/ns/net`, "--", "bash", "-c", probe], {
      env: { PATH: process.env.PATH ?? "", BF_PORT: String(port), BF_OUT: dir },
      stdio: ["ignore", "ignore", "pipe"],
    });
    assert.equal(await new Promise((r) => child.on("close", r)), 0);
    const over = await fs.readFile(path.join(dir, "over"), "utf8");
    assert.match(over, /^HTTP\/1\.1 503 /);
    assert.match(over, new RegExp(`already holds ${max} connections`));
    // The held connections closed with their shell: the relay serves again (the slots came back).
    await new Promise((r) => setTimeout(r, 300));
    const res = await launch(call("after-cap"));
    assert.equal(res.code, 0, res.stderr);
    assert.equal((await originIn("after-cap")).kind, "agent");
  });

  it("takes the next agent's declaration once the first is gone, but not one from a process the first left running", async () => {
    // The first agent leaves a daemon behind that keeps trying to take the slot.
    const first = await launch(
      `(setsid bash -c 'for i in $(seq 1 60); do exec 6<>/dev/tcp/127.0.0.1/$BF_PORT; printf "BENCHFLOW-AGENT\\n" >&6; read -r r <&6; echo "$r" >> "$BF_OUT/daemon"; exec 6>&-; sleep 0.05; done' &) ; sleep 0.2`,
    );
    assert.equal(first.code, 0, first.stderr);
    await new Promise((r) => setTimeout(r, 400));
    const second = await launch(call("second"));
    assert.equal(second.code, 0, second.stderr);
    assert.equal((await originIn("second")).kind, "agent");
    const daemon = await fs.readFile(path.join(dir, "daemon"), "utf8");
    assert.doesNotMatch(daemon, /^ok$/m, "a process the first agent left running took the agent's slot");
  });
});
