// Lets a sandbox reach exactly one server on the host (the model gateway) even with no network:
// a small forwarder runs inside the container's network namespace (entered with nsenter, so it
// sees the host's files) and listens on the container's 127.0.0.1:<port>; each connection goes
// through a unix socket on the host to the server. Nothing else becomes reachable.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { forwarderCap, type GatewayRelayServer, gatewayRelayServer } from "../../gateway-relay.js";

export interface HostService {
  /** The server's port on the host's loopback. */
  port: number;
  host?: string;
}

export interface Relay {
  /** The address inside the sandbox. */
  url: string;
  close(): Promise<void>;
}

const FORWARDER = `const net = require("net");
const [sock, port] = process.argv.slice(1);
${forwarderCap()}
net.createServer((c) => {
  if (!admit(c)) return;
  const u = net.connect(sock);
  const end = () => { c.destroy(); u.destroy(); };
  c.pipe(u).pipe(c);
  for (const s of [c, u]) { s.on("error", end); s.on("close", end); }
}).listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\\n"))
  .on("error", (e) => { process.stderr.write(String(e)); process.exit(1); });
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();`;

/** Why a relay cannot be made here, or null when it can. */
export function relayUnavailableReason(pid: number, engineIsLocal: boolean): string | null {
  if (!engineIsLocal)
    return "the engine is remote, so its containers' network namespaces are not on this machine";
  if (process.getuid?.() !== 0) return "entering a container's network namespace needs root";
  if (!pid || !existsSync(`/proc/${pid}/ns/net`))
    return `the container's process (pid ${pid}) is not visible here`;
  return null;
}

function hostSide(service: HostService, socketPath: string): Promise<GatewayRelayServer> {
  const relay = gatewayRelayServer(service);
  return new Promise((resolve, reject) => {
    relay.server.once("error", reject);
    relay.server.listen(socketPath, () => resolve(relay));
  });
}

export const RELAY_DIR = existsSync("/run") ? "/run/benchflow" : path.join(os.tmpdir(), "benchflow");

export async function startRelay(pid: number, service: HostService): Promise<Relay> {
  await fs.mkdir(RELAY_DIR, { recursive: true, mode: 0o700 });
  const socketPath = path.join(RELAY_DIR, `relay-${process.pid}-${randomBytes(4).toString("hex")}.sock`);
  const server = await hostSide(service, socketPath);
  const child = spawn(
    "nsenter",
    [`--net=/proc/${pid}/ns/net`, "--", process.execPath, "-e", FORWARDER, socketPath, String(service.port)],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  const close = async () => {
    child.stdin?.end();
    child.kill("SIGKILL");
    await server.close();
    await fs.rm(socketPath, { force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      let err = "";
      child.stderr?.on("data", (d) => {
        err += String(d);
      });
      child.stdout?.once("data", () => resolve());
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`the gateway relay exited (${code}): ${err.trim()}`)));
    });
  } catch (e) {
    await close();
    throw e;
  }
  child.removeAllListeners("exit");
  return { url: `http://127.0.0.1:${service.port}`, close };
}
