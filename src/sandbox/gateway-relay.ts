// The host's end of a sandbox's way to the model gateway (both sandboxes: a unix socket the in-sandbox
// side connects to, piped to the gateway's port). It is one rollout's only way in, so it is where a
// rollout's share of the host is bounded: a policy can make its agent's shell open thousands of
// connections, and each would hold a file descriptor of the bench process, which every other rollout
// of the job needs to start. Over the cap a connection is answered 503 and closed; one that sends
// nothing soon after it opened is closed.
import net from "node:net";

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

/** A server for the relay's unix socket: each connection is piped to the gateway, within the bounds. */
export function gatewayRelayServer(
  target: GatewayTarget,
  bounds: RelayBounds = RELAY_BOUNDS,
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
    c.pipe(u).pipe(c);
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
