// Which process made a call. The gateway key is in the agent's environment, so every command its
// tools run inherits it: the key says which rollout, not who in the sandbox spoke. A trusted relay
// (one that runs outside the sandbox, as root, in its network namespace: the container sandbox's)
// looks up the process owning each connection's socket and says so in one line ahead of the HTTP
// bytes, signed with the gateway's origin key so that nothing the sandbox can send passes for it.
//
//   BENCHFLOW-ORIGIN <hmac-sha256 hex of the json> <json>\n
//
// The gateway reads that line off each new connection and keeps the origin with the socket; every
// call on it is recorded with it. A connection without the line (a relay that cannot attribute, an
// agent on the host, SLURM) is `unattributed`; one whose line does not verify is closed.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import type net from "node:net";

export type OriginKind = "agent" | "other" | "unattributed";

/** What the relay found of the process that opened a connection. */
export interface CallOrigin {
  /**
   * agent: the agent's own process; other: any other process in the sandbox (a command its tools
   * ran); unattributed: nobody could tell.
   */
  kind: OriginKind;
  /** The owning process's pid inside the sandbox, its command name, and why it is not the agent. */
  pid?: number;
  comm?: string;
  why?: string;
}

const MAGIC = "BENCHFLOW-ORIGIN ";
/** Longer than any line a relay writes; a connection that sends more before the newline is closed. */
const MAX_LINE = 4096;
/** How long a new connection may send nothing at all. */
const SILENT_MS = 20_000;
export const UNATTRIBUTED: CallOrigin = Object.freeze({ kind: "unattributed" }) as CallOrigin;

export function newOriginKey(): string {
  return randomBytes(32).toString("hex");
}

function mac(key: string, json: string): string {
  return createHmac("sha256", key).update(json).digest("hex");
}

/** The line a trusted relay sends ahead of a connection's bytes. */
export function originLine(key: string, origin: CallOrigin): string {
  const json = JSON.stringify(origin);
  return `${MAGIC}${mac(key, json)} ${json}\n`;
}

/** The origin in a line, or null when the line is not signed with `key`. */
export function readOriginLine(key: string, line: string): CallOrigin | null {
  if (!line.startsWith(MAGIC)) return null;
  const rest = line.slice(MAGIC.length);
  const space = rest.indexOf(" ");
  if (space < 0) return null;
  const [given, json] = [rest.slice(0, space), rest.slice(space + 1)];
  const want = mac(key, json);
  if (given.length !== want.length || !timingSafeEqual(Buffer.from(given), Buffer.from(want))) return null;
  try {
    const o = JSON.parse(json) as CallOrigin;
    return o.kind === "agent" || o.kind === "other" ? o : null;
  } catch {
    return null;
  }
}

/**
 * Hands each new connection of `server` to its HTTP handling once its origin line (if any) is read
 * off; the origin of a request is then `originOf(req.socket)`. The server's own connection listener
 * is moved behind ours, so Node's connection tracking and its header and request timeouts stay.
 */
export function acceptWithOrigins(server: Server, key: string): OriginDoor {
  const origins = new WeakMap<net.Socket, CallOrigin>();
  const pending = new Set<net.Socket>();
  const http = server.listeners("connection") as ((socket: net.Socket) => void)[];
  server.removeAllListeners("connection");
  const handOn = (socket: net.Socket) => {
    for (const listener of http) listener.call(server, socket);
  };
  server.on("connection", (socket: net.Socket) => {
    let head = Buffer.alloc(0);
    pending.add(socket);
    // Silent before its first bytes: closed (the server's own limits start once it is handed over).
    const silent = setTimeout(() => socket.destroy(), SILENT_MS);
    silent.unref();
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const prefix = head.subarray(0, MAGIC.length).toString("latin1");
      if (!MAGIC.startsWith(prefix) && !prefix.startsWith(MAGIC)) return hand(UNATTRIBUTED);
      if (head.length < MAGIC.length) return;
      const newline = head.indexOf(10);
      if (newline < 0) {
        if (head.length > MAX_LINE) socket.destroy();
        return;
      }
      const origin = readOriginLine(key, head.subarray(0, newline).toString("utf8"));
      // A line that claims an origin without the key is a forgery: nothing on it is served.
      if (origin === null) return socket.destroy();
      head = head.subarray(newline + 1);
      hand(origin);
    };
    const hand = (origin: CallOrigin) => {
      clearTimeout(silent);
      pending.delete(socket);
      socket.off("data", onData);
      socket.pause();
      origins.set(socket, origin);
      if (head.length > 0) socket.unshift(head);
      handOn(socket);
      socket.resume();
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => {
      clearTimeout(silent);
      pending.delete(socket);
    });
  });
  return {
    originOf: (socket) => origins.get(socket) ?? UNATTRIBUTED,
    closePending: () => {
      for (const socket of pending) socket.destroy();
    },
  };
}

export interface OriginDoor {
  originOf(socket: net.Socket): CallOrigin;
  /** Closes the connections whose first line has not come (the server's close waits for them). */
  closePending(): void;
}
