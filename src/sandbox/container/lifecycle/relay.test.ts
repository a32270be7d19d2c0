// With no network, the one host server the runner names (the model gateway) is reachable from the
// sandbox and nothing else is: not another server on the host's loopback, not the internet.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Task } from "../../../task/types.js";
import { ContainerBackend } from "../backend.js";
import { engineOrSkip, makeTask, removeTaskDir } from "../testing/kit.js";
import { relayPrecheck } from "./network.js";
import type { ContainerSandbox } from "./sandbox.js";

let task: Task;
const servers: http.Server[] = [];

async function serve(body: string): Promise<number> {
  const server = http.createServer((_req, res) => res.end(body));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

// bash's /dev/tcp: the base image has no curl. Prints the body, or "unreachable".
const fetchIn = (host: string, port: number | string) =>
  `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port} && printf "GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n" >&3 && tail -n 1 <&3' 2>/dev/null || echo unreachable`;

before(async () => {
  task = await makeTask({
    name: "container-gateway",
    dockerfile: "FROM debian:bookworm-slim\nWORKDIR /app\n",
  });
});

after(async () => {
  for (const s of servers) s.close();
  await removeTaskDir(task);
});

describe("gateway access from a container", () => {
  it("reaches the named host server and nothing else when the task has no network", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const gatewayPort = await serve("gateway-ok");
    const decoyPort = await serve("decoy");
    const backend = new ContainerBackend({ hostService: { port: gatewayPort } });
    let sandbox: ContainerSandbox | null = null;
    try {
      sandbox = await backend.create({ task, jobName: "gw", rolloutName: "gw__1", network: false });
      if (relayPrecheck(engine) !== null) {
        // Without the relay the backend must say that "no network" is not enforced.
        assert.match(sandbox.networkEnforcement, /^not_enforced: /);
        return;
      }
      assert.equal(sandbox.networkEnforcement, "enforced");
      assert.equal(sandbox.gatewayUrl, `http://127.0.0.1:${gatewayPort}`);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the port comes from the sandbox's own env
      const viaEnv = await sandbox.exec(fetchIn("127.0.0.1", "${BENCHFLOW_GATEWAY_URL##*:}"), {
        user: "agent",
      });
      assert.equal(viaEnv.stdout.trim(), "gateway-ok");
      const probes = [
        fetchIn("127.0.0.1", decoyPort),
        fetchIn("10.0.2.2", decoyPort),
        fetchIn("10.88.0.1", decoyPort),
        fetchIn("deb.debian.org", 80),
      ];
      for (const probe of probes) {
        const r = await sandbox.exec(probe, { user: "agent" });
        assert.equal(r.stdout.trim(), "unreachable", probe);
      }
    } finally {
      await sandbox?.stop();
    }
  });

  it("gives a public-network sandbox the gateway at the same address", async (t) => {
    const engine = await engineOrSkip(t);
    if (!engine || relayPrecheck(engine) !== null) return;
    const gatewayPort = await serve("gateway-public");
    const backend = new ContainerBackend({ hostService: { port: gatewayPort } });
    const sandbox = await backend.create({ task, jobName: "gw", rolloutName: "gw__2", network: true });
    try {
      assert.equal(sandbox.networkEnforcement, "public");
      const r = await sandbox.exec(fetchIn("127.0.0.1", gatewayPort), { user: "agent" });
      assert.equal(r.stdout.trim(), "gateway-public");
    } finally {
      await sandbox.stop();
    }
  });
});
