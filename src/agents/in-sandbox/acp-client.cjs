// BenchFlow's ACP client, run inside the sandbox next to the agent (by the Node binary of the agent's
// bundle, as the agent user): it starts the ACP adapter as its child and speaks the Agent Client
// Protocol (JSON-RPC 2.0, one message per line) over the adapter's stdin and stdout, so the
// protocol's pipes never cross the sandbox's wall. The host reads what happened afterwards from this
// process's stdout: every message in both directions, one JSON line each ({"dir":"send"|"recv",
// "msg":...}), then one {"benchflow":"end"|"error",...} line. The handshake is upstream's:
// `initialize`, `session/new`, one `session/prompt` with the task's instruction. Permission requests
// are granted (the sandbox is the boundary); an agent that asks for a login is given its API-key method
// (the key it reads is the rollout's gateway key); the client offers no file system or terminal of its own,
// so the agent uses its own tools. Plain JavaScript, run by node as it is: nothing to build.
//
// argv: <how> <command> [args...]; how is "declare" (the adapter is the agent: it is started
// through $BF_DECLARE_EXEC, which declares it to the gateway's relay and execs it) or "plain" (the
// adapter starts the process that calls the model, and that process declares itself).
// env: BF_INSTRUCTION (the prompt), BF_ACP_MCP (session/new's mcpServers, JSON),
// BF_ACP_HANDSHAKE_SEC (initialize and session/new each, default 60).
"use strict";
const { spawn } = require("node:child_process");

const [how, command, ...args] = process.argv.slice(1);
const handshakeMs = Number(process.env.BF_ACP_HANDSHAKE_SEC || 60) * 1000;
const out = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const argv = how === "declare" ? [process.env.BF_DECLARE_EXEC, command, ...args] : [command, ...args];
const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
let finished = false;
/** Where a failure happened: the handshake (the agent never started) or the prompt (it ran). */
let phase = "handshake";

function finish(line, code) {
  if (finished) return;
  finished = true;
  out(line);
  child.stdin.end();
  // The adapter gets a moment to close its session; the sandbox kills whatever is left.
  const kill = setTimeout(() => child.kill("SIGKILL"), 2000);
  child.once("exit", () => {
    clearTimeout(kill);
    process.exit(code);
  });
  if (child.exitCode !== null || child.signalCode !== null) process.exit(code);
}

child.once("error", (err) =>
  finish({ benchflow: "error", phase, message: `cannot start ${command}: ${err.message}` }, 3),
);
child.once("exit", (code, signal) => {
  const how = signal ?? `code ${code}`;
  if (!finished)
    finish({ benchflow: "error", phase, message: `the adapter exited (${how}) before the prompt ended` }, 3);
});

let nextId = 0;
const waiting = new Map();

function send(msg) {
  out({ dir: "send", msg });
  child.stdin.write(`${JSON.stringify(msg)}\n`);
}

function request(method, params, timeoutMs) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => {
    const timer =
      timeoutMs > 0
        ? setTimeout(() => reject(new Error(`${method}: no answer in ${timeoutMs / 1000} s`)), timeoutMs)
        : null;
    waiting.set(id, (msg) => {
      if (timer) clearTimeout(timer);
      const e = msg.error;
      if (e)
        reject(
          new Error(
            `${method}: ${e.message ?? JSON.stringify(e)}${e.data ? ` (${JSON.stringify(e.data)})` : ""}`,
          ),
        );
      else resolve(msg.result);
    });
  });
}

/** What the client answers to the agent's own requests. */
function answer(msg) {
  if (msg.method === "session/request_permission") {
    const options = Array.isArray(msg.params?.options) ? msg.params.options : [];
    const pick =
      options.find((o) => o.kind === "allow_always") ??
      options.find((o) => o.kind === "allow_once") ??
      options[0];
    const outcome = pick ? { outcome: "selected", optionId: pick.optionId } : { outcome: "cancelled" };
    return send({ jsonrpc: "2.0", id: msg.id, result: { outcome } });
  }
  send({
    jsonrpc: "2.0",
    id: msg.id,
    error: { code: -32601, message: `${msg.method} is not offered by this client` },
  });
}

let buffered = "";
child.stdout.on("data", (chunk) => {
  buffered += chunk.toString("utf8");
  let nl = buffered.indexOf("\n");
  while (nl >= 0) {
    const line = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    nl = buffered.indexOf("\n");
    if (!line) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      out({ dir: "recv", text: line.slice(0, 4096) });
      continue;
    }
    out({ dir: "recv", msg });
    if (msg.method !== undefined && msg.id !== undefined) answer(msg);
    else if (msg.method === undefined && waiting.has(msg.id)) {
      const done = waiting.get(msg.id);
      waiting.delete(msg.id);
      done(msg);
    }
  }
});

async function main() {
  const init = await request(
    "initialize",
    {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "benchflow", version: "1" },
    },
    handshakeMs,
  );
  const newSession = () =>
    request(
      "session/new",
      { cwd: process.cwd(), mcpServers: JSON.parse(process.env.BF_ACP_MCP || "[]") },
      handshakeMs,
    );
  const session = await newSession().catch(async (err) => {
    // An agent that wants a login first: the API-key method (the key it reads is the gateway's).
    const methods = Array.isArray(init?.authMethods) ? init.authMethods : [];
    // ACP's env_var methods name the variables they read: one whose variables are all set first.
    const isSet = (m) =>
      Array.isArray(m.vars) && m.vars.length > 0 && m.vars.every((v) => process.env[v.name]);
    const apiKey = methods.find(isSet) ?? methods.find((m) => /api[-_]?key/i.test(String(m.id)));
    if (!/auth/i.test(err.message) || !apiKey) throw err;
    await request("authenticate", { methodId: apiKey.id }, handshakeMs);
    return newSession();
  });
  phase = "prompt";
  const result = await request(
    "session/prompt",
    { sessionId: session.sessionId, prompt: [{ type: "text", text: process.env.BF_INSTRUCTION ?? "" }] },
    0,
  );
  const stopReason = result?.stopReason ?? null;
  finish({ benchflow: "end", stopReason, protocolVersion: init?.protocolVersion ?? null }, 0);
}

main().catch((err) => finish({ benchflow: "error", phase, message: err.message }, 3));
