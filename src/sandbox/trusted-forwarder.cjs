// The trusted end of a sandbox's way to the model gateway. It runs on the host, as root, in the
// sandbox's network namespace only (nsenter --net): it listens on the sandbox's 127.0.0.1:<port>
// like the plain forwarder, but it sees the host's /proc, which the sandbox cannot touch. For each
// connection it finds the process that owns the client's socket and tells the host's end of the
// relay in one line ahead of the bytes:
//
//   ORIGIN {"kind":"agent"|"other","pid":<pid inside>,"comm":"...","why":"..."}\n
//
// The host's end signs that line with the gateway's origin key (origin.ts); this process never holds
// the key. Who the agent is: the launch script declares itself (a connection that sends
// "BENCHFLOW-AGENT\n") right before it execs the agent CLI, so its pid and start time become the
// CLI's. One agent at a time: a declaration is taken only while no declared agent is alive, and only
// from a process that, with every ancestor in the sandbox, started after the slot became free, so
// nothing the policy left running (a daemon, its children, an orphan under the sandbox's init) can
// take the slot of the next step's agent. Plain JavaScript, run by node as it is: nothing to build.
//
// argv: <unix socket of the host's end> <port> <max connections> <first-byte ms> <over-cap answer>
// (the 503 a connection over the cap gets: gateway-relay.ts's, the one every relay gives)
"use strict";
const fs = require("node:fs");
const net = require("node:net");

const [socketPath, portArg, maxArg, silentArg, overCapAnswer] = process.argv.slice(2);
const port = Number(portArg);
const maxConnections = Number(maxArg);
const firstByteMs = Number(silentArg);
const DECLARE = "BENCHFLOW-AGENT\n";
const ownNet = fs.readlinkSync("/proc/self/ns/net");
/** USER_HZ: /proc's start times are in these ticks (100 on every Linux ABI node runs on). */
const TICKS = 100;

function uptimeTicks() {
  return Math.floor(Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]) * TICKS);
}

/** pid, ppid, start time, command name of a host pid, or null when it is gone. */
function processOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const rest = stat.slice(close + 2).split(" ");
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const nspid = /^NSpid:\s*(.*)$/m.exec(status);
    const inside = nspid ? Number(nspid[1].trim().split(/\s+/).pop()) : pid;
    return {
      pid,
      inside,
      comm: stat.slice(stat.indexOf("(") + 1, close),
      ppid: Number(rest[1]),
      start: Number(rest[19]),
    };
  } catch {
    return null;
  }
}

function inSandbox(pid) {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/net`) === ownNet;
  } catch {
    return false;
  }
}

/** The inode of the client's end of a connection: its local port is the one we see as remote. */
function clientInode(clientPort) {
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    let text = "";
    try {
      text = fs.readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = Number.parseInt(f[1].split(":")[1], 16);
      const remote = Number.parseInt(f[2].split(":")[1], 16);
      if (local === clientPort && remote === port && f[9] !== "0") return f[9];
    }
  }
  return null;
}

/** Every process in the sandbox holding the socket open (a fork inherits it: all count). */
function ownersOf(inode) {
  const want = `socket:[${inode}]`;
  const owners = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid || !inSandbox(name)) continue;
    let fds = [];
    try {
      fds = fs.readdirSync(`/proc/${name}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target = "";
      try {
        target = fs.readlinkSync(`/proc/${name}/fd/${fd}`);
      } catch {
        continue;
      }
      if (target === want) {
        owners.push(Number(name));
        break;
      }
    }
  }
  return owners;
}

let agent = null;
let freeSince = uptimeTicks();

function agentAlive() {
  if (agent === null) return false;
  const p = processOf(agent.pid);
  return p !== null && p.start === agent.start;
}

// While an agent is declared, the slot stays taken; once it is gone, it is free from the last time
// it was seen alive (no later: a process the agent started before it ended is older than that).
setInterval(() => {
  if (agent === null) return;
  const now = uptimeTicks();
  if (agentAlive()) freeSince = now;
  else agent = null;
}, 100).unref();

/** Why `p` may not declare itself the agent, or null when it may. */
function declarationRefusal(p) {
  if (agentAlive()) return `an agent is declared already (pid ${agent.pid})`;
  for (let q = p; q !== null && inSandbox(q.pid); q = processOf(q.ppid)) {
    if (q.start < freeSince) return `${q.comm} (pid ${q.inside}) started before the agent's slot was free`;
    if (q.ppid <= 1) break;
  }
  return null;
}

function originOf(owners) {
  if (owners.length === 0) return { kind: "other", why: "no process in the sandbox owns the connection" };
  const procs = owners.map(processOf).filter((p) => p !== null);
  const mine = (p) => agent !== null && p.pid === agent.pid && p.start === agent.start;
  const stranger = procs.find((p) => !mine(p));
  if (agent !== null && procs.length === owners.length && stranger === undefined)
    return { kind: "agent", pid: procs[0].inside, comm: procs[0].comm };
  const who = stranger ?? procs[0] ?? { inside: undefined, comm: "?" };
  const why =
    agent === null
      ? "no agent is declared in the sandbox"
      : `${who.comm} (pid ${who.inside}) is not the agent's own process`;
  return { kind: "other", pid: who.inside, comm: who.comm, why };
}

let open = 0;
function refuse(c, answer) {
  c.on("error", () => c.destroy());
  c.resume();
  c.end(answer, () => c.destroy());
}

net
  .createServer((c) => {
    if (open >= maxConnections) return refuse(c, overCapAnswer);
    open++;
    c.once("close", () => open--);
    c.on("error", () => c.destroy());
    // Looked up at once, while the client surely still holds its end.
    const inode = clientInode(c.remotePort);
    const owners = inode === null ? [] : ownersOf(inode);
    const silent = setTimeout(() => c.destroy(), firstByteMs);
    let head = Buffer.alloc(0);
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const text = head.subarray(0, DECLARE.length).toString("latin1");
      if (DECLARE.startsWith(text) && text.length < DECLARE.length) return;
      clearTimeout(silent);
      c.off("data", onData);
      if (text === DECLARE) return declare(c, owners);
      forward(c, head, originOf(owners));
    };
    c.on("data", onData);
  })
  .listen(port, "127.0.0.1", () => process.stdout.write("ready\n"))
  .on("error", (e) => {
    process.stderr.write(`trusted forwarder: ${e.message}\n`);
    process.exit(1);
  });

function declare(c, owners) {
  const p = owners.length === 1 ? processOf(owners[0]) : null;
  const refusal = p === null ? "the declaration's connection has no single owner" : declarationRefusal(p);
  if (refusal === null) agent = { pid: p.pid, start: p.start };
  c.end(refusal === null ? "ok\n" : `refused: ${refusal}\n`);
}

function forward(c, head, origin) {
  c.pause();
  const u = net.connect(socketPath);
  const end = () => {
    c.destroy();
    u.destroy();
  };
  for (const s of [c, u]) {
    s.on("error", end);
    s.on("close", end);
  }
  u.write(`ORIGIN ${JSON.stringify(origin)}\n`);
  u.write(head);
  c.pipe(u).pipe(c);
  c.resume();
}

process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
