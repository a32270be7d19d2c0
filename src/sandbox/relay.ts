// Lets a sandbox reach exactly one server on the host (the model gateway) even with no network:
// the trusted forwarder (trusted-forwarder.cjs) runs in the sandbox's network namespace only
// (entered with nsenter, so it sees the host's files and processes) and listens on the sandbox's
// 127.0.0.1:<port>; each connection goes through a unix socket on the host, out of the sandbox's
// reach, to the server. Nothing else becomes reachable. Both sandboxes use it where the host is root:
// the container's namespace, or the namespace sandbox's held one.
//
// The forwarder says which process in the sandbox opened each connection; with the gateway's origin
// key the host's end signs that for the gateway (origin.ts), so the gateway knows the agent's own
// calls from those of the commands its tools ran.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type GatewayRelayServer, gatewayRelayServer, overCapAnswer, RELAY_BOUNDS } from "./gateway-relay.js";

export interface HostService {
  /** The server's port on the host's loopback. */
  port: number;
  host?: string;
  /** The gateway's origin key: with it each call is attributed to its process (never sent to the sandbox). */
  originKey?: string;
}

export interface Relay {
  /** The address inside the sandbox. */
  url: string;
  /** Whether each call reaches the gateway with its origin signed (the host side holds the key). */
  attributes: boolean;
  close(): Promise<void>;
}

export const TRUSTED_FORWARDER = fileURLToPath(new URL("./trusted-forwarder.cjs", import.meta.url));

/** Why a relay into the namespace of `pid` cannot be made here, or null when it can. */
export function relayUnavailableReason(pid: number, engineIsLocal: boolean): string | null {
  if (!engineIsLocal)
    return "the engine is remote, so its containers' network namespaces are not on this machine";
  if (process.getuid?.() !== 0) return "entering a container's network namespace needs root";
  if (!pid || !existsSync(`/proc/${pid}/ns/net`))
    return `the container's process (pid ${pid}) is not visible here`;
  return null;
}

function hostSide(service: HostService, socketPath: string): Promise<GatewayRelayServer> {
  const relay = gatewayRelayServer(service, RELAY_BOUNDS, { originKey: service.originKey ?? null });
  return new Promise((resolve, reject) => {
    relay.server.once("error", reject);
    relay.server.listen(socketPath, () => resolve(relay));
  });
}

export const RELAY_DIR = existsSync("/run") ? "/run/benchflow" : path.join(os.tmpdir(), "benchflow");

/** Starts the forwarder in the network namespace of host process `pid`, for `service`. */
export async function startRelay(pid: number, service: HostService): Promise<Relay> {
  await fs.mkdir(RELAY_DIR, { recursive: true, mode: 0o700 });
  const socketPath = path.join(RELAY_DIR, `relay-${process.pid}-${randomBytes(4).toString("hex")}.sock`);
  const server = await hostSide(service, socketPath);
  const { maxConnections, firstByteMs } = RELAY_BOUNDS;
  const child = spawn(
    "nsenter",
    [
      `--net=/proc/${pid}/ns/net`,
      "--",
      process.execPath,
      TRUSTED_FORWARDER,
      socketPath,
      String(service.port),
      String(maxConnections),
      String(firstByteMs),
      overCapAnswer(maxConnections),
    ],
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
  return { url: `http://127.0.0.1:${service.port}`, attributes: service.originKey !== undefined, close };
}
