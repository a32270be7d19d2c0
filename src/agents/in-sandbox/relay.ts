// A namespace sandbox has a network namespace of its own (only loopback without network; slirp's NAT
// with it, the host's loopback cut off), so an agent inside cannot reach the gateway on the host's. The relay: a unix socket on the host (in a folder bound read-only into
// the sandbox) forwards to the gateway, and a small forwarder started next to the agent listens on
// the sandbox's 127.0.0.1:<port> and forwards to that socket. Nothing else becomes reachable.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { forwarderCap, gatewayRelayServer } from "../../sandbox/gateway-relay.js";

/** Where the relay folder and the Node binary appear inside the sandbox. */
export const RELAY_MOUNT = "/opt/benchflow/relay";
export const NODE_MOUNT = "/opt/benchflow/node";
export const RELAY_SOCKET = `${RELAY_MOUNT}/gateway.sock`;

export interface SocketRelay {
  /** Host folder holding gateway.sock. */
  dir: string;
  /** Connections refused for being over the rollout's cap (gateway-relay.ts). */
  refused(): number;
  close(): Promise<void>;
}

export async function startSocketRelay(port: number, host = "127.0.0.1"): Promise<SocketRelay> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bf-relay-"));
  await fs.chmod(dir, 0o755);
  const socketPath = path.join(dir, "gateway.sock");
  const relay = gatewayRelayServer({ port, host });
  const { server } = relay;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  // The agent user inside is not the socket's owner, and connecting needs write permission.
  await fs.chmod(socketPath, 0o777);
  return {
    dir,
    refused: relay.refused,
    async close() {
      await relay.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** The in-sandbox forwarder: node -e FORWARDER <socket> <port> <ready-file>. */
export const FORWARDER = `const net = require("net"), fs = require("fs");
const [sock, port, ready] = process.argv.slice(1);
${forwarderCap()}
net.createServer((c) => {
  if (!admit(c)) return;
  const u = net.connect(sock);
  const end = () => { c.destroy(); u.destroy(); };
  for (const s of [c, u]) { s.on("error", end); s.on("close", end); }
  c.pipe(u).pipe(c);
}).listen(Number(port), "127.0.0.1", () => fs.writeFileSync(ready, "ok"))
  .on("error", (e) => { process.stderr.write("relay: " + e.message + "\\n"); process.exit(1); });`;
