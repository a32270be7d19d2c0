// The host's end of a sandbox's way to the model gateway (both sandboxes: a unix socket the in-sandbox
// side connects to, piped to the gateway's port). It is one rollout's only way in, so it is where a
// rollout's share of the host is bounded: a policy can make its agent's shell open thousands of
// connections, and each would hold a file descriptor of the bench process, which every other rollout
// of the job needs to start. Over the cap a connection is answered 503 and closed; one that sends
// nothing soon after it opened is closed.
import net from "node:net";
import { type CallOrigin, originLine } from "../gateway/origin.js";

export interface RelayBounds {
  /** Connections one rollout may hold open to the gateway at once. */
  maxConnections: number;
  /** Milliseconds a new connection may stay silent before it is closed. */
  firstByteMs: number;
}

/** Agents hold a few keep-alive connections (subagents in parallel a few more). */
export const RELAY_BOUNDS: RelayBounds = { maxConnections: 64, firstByteMs: 30_000 };

export interface GatewayTarget {
  port: number;
  host?: string;
}

/** The answer to a connection over the cap: plain HTTP, so the agent shows why its call failed. */
export function overCapAnswer(max: number): string {
  const body = JSON.stringify({
    error: {
      type: "overloaded_error",
      message: `gateway relay: this rollout already holds ${max} connections to the model gateway (the cap per rollout); close some`,
    },
  });
  return `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Answers and closes: what the client sent is read and dropped, or its end would never be seen. */
function refuse(c: net.Socket, answer: string): void {
  c.on("error", () => c.destroy());
  c.resume();
  c.end(answer, () => c.destroy());
}

export interface GatewayRelayServer {
  server: net.Server;
  /** Connections refused for being over the cap, so far. */
  refused(): number;
  /** Closes every connection and the server. */
  close(): Promise<void>;
}

export interface TrustedSide {
  /**
   * The gateway's origin key, or null where the gateway has none (a SLURM node's): the origin line
   * is then dropped and the calls are unattributed.
   */
  originKey: string | null;
}

/**
 * A server for the relay's unix socket: each connection is piped to the gateway, within the bounds.
 * With `trusted`, the socket is the trusted forwarder's alone (never reachable from the sandbox):
 * each connection opens with its "ORIGIN <json>" line, which is signed here for the gateway.
 */
export function gatewayRelayServer(
  target: GatewayTarget,
  bounds: RelayBounds = RELAY_BOUNDS,
  trusted?: TrustedSide,
): GatewayRelayServer {
  const open = new Set<net.Socket>();
  let refused = 0;
  const server = net.createServer((c) => {
    if (open.size >= bounds.maxConnections) {
      refused++;
      refuse(c, overCapAnswer(bounds.maxConnections));
      return;
    }
    open.add(c);
    // Silent since it opened: closed. Once it spoke, the gateway's own timeouts take over.
    const silent = setTimeout(() => c.destroy(), bounds.firstByteMs);
    c.once("data", () => clearTimeout(silent));
    const u = net.connect(target.port, target.host ?? "127.0.0.1");
    const end = () => {
      clearTimeout(silent);
      open.delete(c);
      c.destroy();
      u.destroy();
    };
    for (const s of [c, u]) {
      s.on("error", end);
      s.on("close", end);
    }
    if (trusted === undefined) c.pipe(u).pipe(c);
    else signOrigin(c, u, trusted.originKey, end);
  });
  return {
    server,
    refused: () => refused,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * The same cap in a forwarder that runs as its own process (node -e), as JavaScript source: a flood
 * must not exhaust that process's descriptors either. Defines `admit(c)`, true when `c` may proceed.
 */
export function forwarderCap(bounds: RelayBounds = RELAY_BOUNDS): string {
  return `let bfOpen = 0;
const bfAnswer = ${JSON.stringify(overCapAnswer(bounds.maxConnections))};
function admit(c) {
  if (bfOpen >= ${bounds.maxConnections}) { c.on("error", () => c.destroy()); c.resume(); c.end(bfAnswer, () => c.destroy()); return false; }
  bfOpen++; c.once("close", () => bfOpen--); return true;
}`;
}

const ORIGIN = "ORIGIN ";

/** The forwarder's origin line, checked and signed; anything else closes the connection. */
function parseForwarded(line: string): CallOrigin | null {
  if (!line.startsWith(ORIGIN)) return null;
  try {
    const o = JSON.parse(line.slice(ORIGIN.length)) as CallOrigin;
    if (o.kind !== "agent" && o.kind !== "other") return null;
    const origin: CallOrigin = { kind: o.kind };
    if (typeof o.pid === "number") origin.pid = o.pid;
    if (typeof o.comm === "string") origin.comm = o.comm.slice(0, 64);
    if (typeof o.why === "string") origin.why = o.why.slice(0, 200);
    return origin;
  } catch {
    return null;
  }
}

function signOrigin(c: net.Socket, u: net.Socket, key: string | null, end: () => void): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const newline = head.indexOf(10);
    if (newline < 0) {
      if (head.length > 4096) end();
      return;
    }
    c.off("data", onData);
    c.pause();
    const origin = parseForwarded(head.subarray(0, newline).toString("utf8"));
    if (origin === null) return end();
    if (key !== null) u.write(originLine(key, origin));
    u.write(head.subarray(newline + 1));
    c.pipe(u).pipe(c);
  };
  c.on("data", onData);
}
