// The relay's bounds, on real sockets: past the cap a connection gets a plain 503 that says why, a
// closed connection frees its place, a silent one is closed; the in-sandbox forwarder (a process of
// its own) holds the same cap.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { FORWARDER } from "../agents/in-sandbox/relay.js";
import { type GatewayRelayServer, gatewayRelayServer, RELAY_BOUNDS } from "./gateway-relay.js";

let dir: string;
let gateway: http.Server;
let gatewayPort: number;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bf-relay-test-"));
  gateway = http.createServer((_req, res) => res.end("pong"));
  await new Promise<void>((r) => gateway.listen(0, "127.0.0.1", () => r()));
  gatewayPort = (gateway.address() as net.AddressInfo).port;
});
after(async () => {
  gateway.closeAllConnections();
  await new Promise<void>((r) => gateway.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

async function listen(
  name: string,
  max: number,
  firstByteMs = 60_000,
): Promise<[GatewayRelayServer, string]> {
  const socketPath = path.join(dir, name);
  const relay = gatewayRelayServer({ port: gatewayPort }, { maxConnections: max, firstByteMs });
  await new Promise<void>((r) => relay.server.listen(socketPath, () => r()));
  return [relay, socketPath];
}

/** Sends one GET over a fresh connection to `connect` and returns what came back, whole. */
function ask(connect: () => net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect();
    let got = "";
    s.on("data", (d) => {
      got += d;
      if (got.includes("pong") || got.includes("503")) s.destroy();
    });
    s.on("close", () => resolve(got));
    s.on("error", reject);
    s.write("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
  });
}

function hold(connect: () => net.Socket): Promise<net.Socket> {
  return new Promise((resolve) => {
    const s = connect();
    s.on("error", () => {});
    // One byte: the connection spoke, so only the cap applies to it.
    s.write("G", () => resolve(s));
  });
}

describe("the gateway relay's bounds", () => {
  it("answers 503 past the cap, and a closed connection frees its place", async () => {
    const [relay, sock] = await listen("cap.sock", 3);
    const connect = () => net.connect(sock);
    const held = await Promise.all([hold(connect), hold(connect), hold(connect)]);
    try {
      await sleep(50);
      const over = await ask(connect);
      assert.match(over, /^HTTP\/1\.1 503/);
      assert.match(over, /already holds 3 connections to the model gateway/);
      assert.equal(relay.refused(), 1);
      held[0]?.destroy();
      await sleep(100);
      assert.match(await ask(connect), /pong/, "a freed place is given to the next connection");
    } finally {
      for (const s of held) s.destroy();
      await relay.close();
    }
  });

  it("closes a connection that sends nothing", async () => {
    const [relay, sock] = await listen("silent.sock", 3, 300);
    const s = net.connect(sock);
    const closed = await new Promise<boolean>((resolve) => {
      const guard = setTimeout(() => resolve(false), 60_000);
      s.on("close", () => {
        clearTimeout(guard);
        resolve(true);
      });
      s.on("error", () => {});
    });
    assert.ok(closed);
    await relay.close();
  });

  it("the in-sandbox forwarder, a process of its own, holds the same cap", async () => {
    const [relay, sock] = await listen("fwd.sock", 10_000);
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const ready = path.join(dir, "fwd.ready");
    const child: ChildProcess = spawn(process.execPath, ["-e", FORWARDER, sock, String(port), ready], {
      stdio: "ignore",
    });
    try {
      for (let i = 0; i < 500; i++) {
        if (
          await readFile(ready).then(
            () => true,
            () => false,
          )
        )
          break;
        await sleep(20);
      }
      const connect = () => net.connect(port, "127.0.0.1");
      const held = await Promise.all(
        Array.from({ length: RELAY_BOUNDS.maxConnections }, () => hold(connect)),
      );
      await sleep(100);
      assert.match(await ask(connect), /^HTTP\/1\.1 503/);
      held[0]?.destroy();
      await sleep(100);
      assert.match(await ask(connect), /pong/);
      for (const s of held) s.destroy();
    } finally {
      child.kill("SIGKILL");
      await relay.close();
    }
  });
});
