// Around the gateway, nothing: with network on, the agent reaches neither a server the host runs on
// 0.0.0.0 (at any of the host's own addresses) nor the policy endpoint, in both sandboxes, as the
// agent user and as root; the gateway still answers through BENCHFLOW_GATEWAY_URL, and the public
// internet still does. A full run records it in config.json. Run with DOCKER_HOST set for Docker.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { promisify } from "node:util";
import { Evaluation } from "../src/job/evaluation.js";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import {
  makeTask as containerTask,
  engineOrSkip,
  removeTaskDir,
} from "../src/sandbox/container/testing/kit.js";
import { hostAddresses, runFirewall, SLIRP_HOST } from "../src/sandbox/host-block.js";
import { GUARD_TABLE, guardRuleset } from "../src/sandbox/host-guard.js";
import { createNamespaceBackend } from "../src/sandbox/namespace/backend.js";
import type { NamespaceSandbox } from "../src/sandbox/namespace/sandbox.js";
import { makeSpec, makeTask as namespaceTask, tempDir } from "../src/sandbox/namespace/testing/kit.js";
import type { PolicyEndpoint, Sandbox } from "../src/sandbox/types.js";
import { startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import type { Task } from "../src/task/types.js";
import { FIXTURES, REPO, rollouts, useScratch } from "./testing/bench.js";
import { namespaceRan } from "./testing/engine-pass.js";

const run = promisify(execFile);
const scratch = useScratch("host-block");
const MARKER = "HOST-ANY-ADDRESS-7e2a";
const servers: net.Server[] = [];
let anyPort: number;
let gatewayPort: number;
let policy: Awaited<ReturnType<typeof startScriptedEndpoint>>;
/** The scripted policy's port: it stands in for vLLM served on the host's 0.0.0.0. */
let policyPort: number;
/** The host's addresses a bash /dev/tcp can name (link-local IPv6 needs a scope; the rules hold it too). */
let addresses: string[];
let online = { http: false, https: false };

async function listen(server: net.Server, host: string): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as net.AddressInfo).port;
}

/** What answers a connect and one request from the host itself ("none" when nothing). */
function fromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 5000 });
    let got = "";
    s.on("connect", () => s.write("GET /v1/models HTTP/1.0\r\n\r\n"));
    s.on("data", (b) => {
      got += b.toString();
    });
    s.on("timeout", () => s.destroy());
    s.on("error", () => resolve("none"));
    s.on("close", () => resolve(got.split("\r\n")[0]?.trim() || "none"));
  });
}

/**
 * The shell that probes from inside: one "host port => first line" per target, "none" when nothing
 * answered. The probes run at once, so a dropped SYN's wait is paid once, not once per target.
 */
function probeScript(targets: [string, number][]): string {
  const probes = targets.map(
    ([h, p]) =>
      `(r=$(timeout 30 bash -c 'exec 3<>/dev/tcp/${h}/${p} && printf "GET /v1/models HTTP/1.0\\r\\n\\r\\n" >&3 && head -n1 <&3' 2>/dev/null | tr -d '\\r'); echo "${h} ${p} => \${r:-none}") &`,
  );
  return `${probes.join("\n")}\nwait`;
}

/** The default route's gateway inside (the bridge's host side), read without iproute2. */
const GATEWAY_OF_ROUTE = `gw=$(awk '$2=="00000000"{print $3; exit}' /proc/net/route); printf "%d.%d.%d.%d" 0x\${gw:6:2} 0x\${gw:4:2} 0x\${gw:2:2} 0x\${gw:0:2}`;

before(async () => {
  anyPort = await listen(
    net.createServer((c) => c.end(`${MARKER}\n`)),
    "::",
  );
  gatewayPort = await listen(
    http.createServer((_q, res) => res.end("gateway-ok")),
    "127.0.0.1",
  );
  policy = await startScriptedEndpoint({ script: { conversations: [] }, host: "0.0.0.0" });
  policyPort = Number(new URL(policy.baseUrl).port);
  const found = await hostAddresses();
  addresses = [...found.v4, ...found.v6.filter((a) => !a.startsWith("fe80:"))];
  online = {
    http: (await fromHost("deb.debian.org", 80)).startsWith("HTTP/"),
    https: await canConnect("deb.debian.org", 443),
  };
});

after(async () => {
  await policy?.close();
  for (const s of servers) s.close();
});

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 5000 });
    s.on("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.on("timeout", () => s.destroy());
    s.on("error", () => resolve(false));
    s.on("close", () => resolve(false));
  });
}

type Kind = "namespace" | "container";

/** The sandbox's own rules alone: the host's guard (host-guard.ts) off for `work`, then back. */
/** The addresses in the host guard's sets now (each rollout's container leases its own). */
async function guardElements(): Promise<string[]> {
  const found: string[] = [];
  for (const set of ["sandbox4", "sandbox6"]) {
    // No table yet (no sandbox has loaded the guard in this boot): no addresses.
    const listed = await run("nft", ["-j", "list", "set", "inet", GUARD_TABLE, set]).then(
      (r) => r.stdout,
      () => "{}",
    );
    for (const item of JSON.parse(listed).nftables ?? []) {
      for (const el of item.set?.elem ?? []) found.push(typeof el === "string" ? el : String(el.elem?.val));
    }
  }
  return found;
}

async function withoutGuard<T>(work: () => Promise<T>): Promise<T> {
  if (process.getuid?.() !== 0) return work();
  for (const chain of ["input", "output"]) await run("nft", ["flush", "chain", "inet", GUARD_TABLE, chain]);
  try {
    return await work();
  } finally {
    await runFirewall(["nft", "-f", "-"], guardRuleset());
  }
}

async function makeSandbox(
  t: TestContext,
  kind: Kind,
  endpoint: PolicyEndpoint,
): Promise<{ sandbox: Sandbox; cleanup: () => Promise<void> } | null> {
  const spec = { network: true, hostService: { port: gatewayPort }, policyEndpoint: endpoint };
  if (kind === "namespace") {
    // The gateway's path is the trusted relay the sandbox itself starts on the gateway's port.
    const dir = await tempDir("host-block");
    const env = { BENCHFLOW_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}` };
    const sandbox = await createNamespaceBackend().create(
      makeSpec(namespaceTask({ dir: dir.dir }), { ...spec, env }),
    );
    return {
      sandbox,
      cleanup: async () => {
        await sandbox.stop();
        await dir.cleanup();
      },
    };
  }
  if (!(await engineOrSkip(t))) return null;
  const task: Task = await containerTask({
    name: "host-block",
    dockerfile: "FROM debian:bookworm-slim\nWORKDIR /app\n",
  });
  const sandbox = await new ContainerBackend().create({
    task,
    jobName: "host-block",
    rolloutName: "host-block__1",
    ...spec,
  });
  return {
    sandbox,
    cleanup: async () => {
      await sandbox.stop();
      await removeTaskDir(task);
    },
  };
}

describe("host block: the agent reaches the gateway and the internet, not the host or the endpoint", () => {
  for (const kind of ["namespace", "container"] as const) {
    it(`${kind}: no host address answers on any port, the gateway does`, namespaceRan(kind), async (t) => {
      // Every address answers from the host itself: what the sandbox misses, the rules took away.
      for (const a of addresses) assert.equal(await fromHost(a, anyPort), MARKER, `${a} from the host`);
      const made = await makeSandbox(t, kind, { host: addresses[0] as string, port: policyPort });
      if (!made) return;
      const { sandbox } = made;
      try {
        assert.equal(sandbox.hostBlock?.applied, "nft", JSON.stringify(sandbox.hostBlock));
        assert.ok((sandbox.hostBlock?.addresses ?? 0) >= addresses.length);
        assert.equal(sandbox.hostBlock?.endpoint, `${addresses[0]}:${policyPort}`);
        const gateway = (await sandbox.exec(GATEWAY_OF_ROUTE)).stdout.trim();
        const hosts = [...new Set([...addresses, gateway, SLIRP_HOST])];
        const targets: [string, number][] = hosts.flatMap((h) => [
          [h, anyPort] as [string, number],
          [h, policyPort] as [string, number],
        ]);
        for (const user of ["agent", "root"] as const) {
          const probes = (await sandbox.exec(probeScript(targets), { user })).stdout;
          t.diagnostic(`${user}:\n${probes}`);
          assert.equal(probes.trim().split("\n").length, targets.length, probes);
          for (const line of probes.trim().split("\n")) assert.match(line, /=> none$/, `${user}: ${line}`);
          // Nor can the agent, root included, take the rules away: no CAP_NET_ADMIN (bit 12).
          const caps = (await sandbox.exec("sed -n 's/^CapEff:\\s*//p' /proc/self/status", { user })).stdout;
          assert.equal(BigInt(`0x${caps.trim()}`) & (1n << 12n), 0n, `${user} has CAP_NET_ADMIN: ${caps}`);
          // The gateway, through the relay, is still there for the agent.
          const viaEnv = await sandbox.exec(
            `p=\${BENCHFLOW_GATEWAY_URL##*:}; timeout 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && tail -n1 <&3"`,
            { user },
          );
          assert.equal(viaEnv.stdout.trim(), "gateway-ok", viaEnv.stderr);
        }
        if (!online.http)
          t.diagnostic("public egress not checked: deb.debian.org:80 is not reachable from this machine");
        else {
          const out = (await sandbox.exec(probeScript([["deb.debian.org", 80]]), { user: "agent" })).stdout;
          assert.match(out, /=> HTTP\/1\.[01] /, out);
        }
      } finally {
        await made.cleanup();
      }
    });

    it(
      `${kind}: a policy endpoint on another machine is closed at its port only`,
      namespaceRan(kind),
      async (t) => {
        if (!online.http || !online.https) {
          t.skip("deb.debian.org:80 and :443 are not both reachable from this machine: no remote stand-in");
          return;
        }
        // deb.debian.org:443 stands in for vLLM on another machine; its port 80 must stay open.
        const made = await makeSandbox(t, kind, { host: "deb.debian.org", port: 443 });
        if (!made) return;
        try {
          assert.equal(made.sandbox.hostBlock?.endpoint, "deb.debian.org:443");
          const connects = (port: number) =>
            `timeout 30 bash -c 'exec 3<>/dev/tcp/deb.debian.org/${port}' 2>/dev/null && echo open || echo closed`;
          assert.equal((await made.sandbox.exec(connects(443), { user: "agent" })).stdout.trim(), "closed");
          assert.equal((await made.sandbox.exec(connects(80), { user: "agent" })).stdout.trim(), "open");
        } finally {
          await made.cleanup();
        }
      },
    );
  }

  for (const network of [true, false]) {
    it(`container, compose (network ${network ? "on" : "off"}): the host is closed on the trial's network too; sidecars and DNS still answer`, async (t) => {
      if (!(await engineOrSkip(t))) return;
      const task = await containerTask({
        name: "host-block-compose",
        dockerfile: "FROM debian:bookworm-slim\nWORKDIR /app\n",
        files: {
          "docker-compose.yaml": `services:
  side:
    image: debian:bookworm-slim
    command: ["sleep", "infinity"]
`,
        },
      });
      const sandbox = await new ContainerBackend().create({
        task,
        jobName: "host-block",
        rolloutName: `host-block-compose__${network}`,
        network,
        hostService: { port: gatewayPort },
      });
      try {
        assert.equal(sandbox.hostBlock?.applied, "nft", JSON.stringify(sandbox.hostBlock));
        const gateway = (await sandbox.exec(GATEWAY_OF_ROUTE)).stdout.trim();
        const hosts = [...new Set([...addresses, ...(gateway === "0.0.0.0" ? [] : [gateway])])];
        const probes = (await sandbox.exec(probeScript(hosts.map((h) => [h, anyPort])), { user: "root" }))
          .stdout;
        t.diagnostic(probes);
        for (const line of probes.trim().split("\n")) assert.match(line, /=> none$/, line);
        // The sidecar by its name: the engine's resolver (on the bridge, for Podman) still answers.
        const side = await sandbox.exec("getent hosts side", { user: "agent" });
        assert.equal(side.exitCode, 0, `the sidecar's name does not resolve: ${side.stderr}`);
        const viaEnv = await sandbox.exec(
          `p=\${BENCHFLOW_GATEWAY_URL##*:}; timeout 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && tail -n1 <&3"`,
          { user: "agent" },
        );
        assert.equal(viaEnv.stdout.trim(), "gateway-ok", viaEnv.stderr);
      } finally {
        await sandbox.stop();
        await removeTaskDir(task);
      }
    });
  }

  it(
    "namespace: a root agent's raw packets do not reach the host either",
    namespaceRan("namespace"),
    async (t) => {
      const python = await run("sh", ["-c", "command -v python3"]).catch(() => null);
      if (!python) {
        t.skip("python3 is not on this machine (the raw packet is written with it)");
        return;
      }
      const hits = { blocked: 0, control: 0 };
      const blockedPort = await listen(
        net.createServer((c) => {
          hits.blocked++;
          c.destroy();
        }),
        "0.0.0.0",
      );
      const controlPort = await listen(
        net.createServer((c) => {
          hits.control++;
          c.destroy();
        }),
        "0.0.0.0",
      );
      const made = await makeSandbox(t, "namespace", { host: "127.0.0.1", port: policyPort });
      if (!made) return;
      const sandbox = made.sandbox as NamespaceSandbox;
      try {
        await sandbox.upload(path.join(REPO, "test/fixtures/host-block/raw-syn.py"), "/tmp/raw-syn.py");
        const host = addresses.find((a) => net.isIPv4(a)) as string;
        // slirp4netns's guest address and its gateway's MAC are fixed.
        const syn = (port: number) =>
          `python3 /tmp/raw-syn.py tap0 10.0.2.100 52:55:0a:00:02:02 ${host} ${port}`;
        const blocked = await sandbox.exec(syn(blockedPort), { user: "root" });
        assert.equal(blocked.exitCode, 0, blocked.stderr);
        assert.match(blocked.stdout, /^send failed: .*No buffer space/, "the frame left for the host");
        // The control: the egress table removed (as the agent cannot), the same frame reaches the host.
        const { joinPrefix } = await sandbox.startNetwork();
        await run(joinPrefix[0] as string, [
          ...joinPrefix.slice(1),
          "nft",
          "delete",
          "table",
          "netdev",
          "benchflow_host_block",
        ]);
        // The host's guard off too: it would refuse slirp's connection on the host's side.
        const control = await withoutGuard(() => sandbox.exec(syn(controlPort), { user: "root" }));
        assert.equal(control.stdout.trim(), "sent\nsynack", control.stderr);
        // Bounded only against a hang; slirp4netns handles frames in order, so the first came before.
        for (let i = 0; i < 500 && hits.control === 0; i++) await new Promise((r) => setTimeout(r, 20));
        assert.equal(hits.control, 1, "the control frame never reached the host: the probe itself is broken");
        assert.equal(hits.blocked, 0, "a raw frame reached the host past the rules");
      } finally {
        await made.cleanup();
      }
    },
  );

  it(
    "namespace as a user without root: closed too, and the sandbox's root cannot flush the rules",
    namespaceRan("namespace"),
    async (t) => {
      if (process.getuid?.() !== 0) return t.skip("needs root, to switch to uid 1000");
      const task = await tempDir("host-block-nonroot-task");
      const out = await tempDir("host-block-nonroot-out");
      t.after(async () => {
        await task.cleanup();
        await out.cleanup();
      });
      await fs.chown(out.dir, 1000, 1000);
      const host = addresses.find((a) => net.isIPv4(a)) as string;
      // slirp4netns needs /dev/net/tun, root-only on some machines: a private mount namespace gets a
      // node of it the user may open, so nothing on the host changes.
      const user = [
        "setpriv",
        "--reuid=1000",
        "--regid=1000",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        process.execPath,
        "--import",
        "tsx",
        path.join(REPO, "test/fixtures/host-block/nonroot.ts"),
        task.dir,
        out.dir,
        host,
        String(anyPort),
      ];
      const tun = path.join(out.dir, "tun");
      const { stdout } = await run(
        "unshare",
        [
          "--mount",
          "--propagation",
          "private",
          "sh",
          "-c",
          'mknod -m 666 "$0" c 10 200 && mount --bind "$0" /dev/net/tun && exec "$@"',
          tun,
          ...user,
        ],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: out.dir }, cwd: REPO },
      );
      const seen = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
      assert.equal(seen.hostBlock?.applied, "nft", stdout);
      assert.equal(seen.agent.trim(), "none");
      assert.equal(seen.root.trim(), "none");
    },
  );

  it("container: a root agent's raw packets do not leave the container for the host", async (t) => {
    const python = await run("sh", ["-c", "command -v python3"]).catch(() => null);
    if (!python) return t.skip("python3 is not on this machine (the raw packet is written with it)");
    const engine = await engineOrSkip(t);
    if (!engine) return;
    const made = await makeSandbox(t, "container", { host: "127.0.0.1", port: policyPort });
    if (!made) return;
    try {
      const info = await engine.client.json<{ State: { Pid: number } }>(
        "GET",
        `/containers/${made.sandbox.id}/json`,
      );
      // The agent's network namespace, entered with the host's python3 (the image has none).
      const ns = `--net=/proc/${info.State.Pid}/ns/net`;
      const route = (await run("nsenter", [ns, "ip", "-j", "route", "show", "default"])).stdout;
      const gateway = (JSON.parse(route) as { gateway: string }[])[0]?.gateway as string;
      const own = (await run("nsenter", [ns, "ip", "-j", "-4", "addr", "show", "eth0"])).stdout;
      const src = (JSON.parse(own) as { addr_info: { local: string }[] }[])[0]?.addr_info[0]?.local as string;
      // The bridge's MAC, read on the host: the interface that holds the gateway's address.
      const ifaces = JSON.parse((await run("ip", ["-j", "addr", "show"])).stdout) as {
        address: string;
        addr_info: { local: string }[];
      }[];
      const mac = ifaces.find((i) => i.addr_info.some((a) => a.local === gateway))?.address as string;
      assert.ok(gateway && src && mac, `${gateway} ${src} ${mac}`);
      const script = path.join(REPO, "test/fixtures/host-block/raw-syn.py");
      const syn = async () =>
        (await run("nsenter", [ns, "python3", script, "eth0", src, mac, gateway, String(anyPort)])).stdout;
      assert.match(await syn(), /^send failed: .*No buffer space/, "the frame left for the host");
      // The control: without the egress table (the agent cannot drop it) the host answers the same frame.
      await run("nsenter", [ns, "nft", "delete", "table", "netdev", "benchflow_host_block"]);
      assert.equal((await withoutGuard(syn)).trim(), "sent\nsynack");
    } finally {
      await made.cleanup();
    }
  });

  for (const kind of ["namespace", "container"] as const) {
    it(
      `${kind}: an address the host gains after the sandbox started is closed too (the host's guard)`,
      namespaceRan(kind),
      async (t) => {
        if (process.getuid?.() !== 0) return t.skip("the host's guard needs root");
        const before = await guardElements();
        const made = await makeSandbox(t, kind, { host: "127.0.0.1", port: policyPort });
        if (!made) return;
        const leased = (await guardElements()).filter((a) => !before.includes(a));
        // An address no sandbox's own rules can name: it did not exist when they were written (as a
        // sibling rollout's compose network, made later, brings a bridge address with it).
        const later = "198.18.77.41";
        const probe = probeScript([[later, anyPort]]);
        try {
          assert.equal(made.sandbox.hostBlock?.guard, "nft", JSON.stringify(made.sandbox.hostBlock));
          await run("ip", ["addr", "add", `${later}/32`, "dev", "lo"]);
          assert.equal(
            await fromHost(later, anyPort),
            MARKER,
            "the new address does not answer the host itself",
          );
          for (const user of ["agent", "root"] as const) {
            const out = (await made.sandbox.exec(probe, { user })).stdout;
            assert.match(out.trim(), /=> none$/, `${user}: ${out}`);
          }
          // The control: without the guard's rule (which the agent cannot touch) the same probe answers,
          // so the guard, not the sandbox's own rules, closed it.
          const out = (await withoutGuard(() => made.sandbox.exec(probe, { user: "agent" }))).stdout;
          assert.match(out.trim(), new RegExp(`=> ${MARKER}$`), `the control did not reach the host: ${out}`);
        } finally {
          await run("ip", ["addr", "del", `${later}/32`, "dev", "lo"]).catch(() => {});
          await made.cleanup();
        }
        if (kind === "container") {
          // The container's own address was leased while it ran, and stopping it gave the lease back
          // (an element left behind would close the host to whatever container gets the address next).
          assert.notDeepEqual(leased, [], "the container's address was never in the guard");
          const after = await guardElements();
          assert.deepEqual(
            leased.filter((a) => after.includes(a)),
            [],
            `stayed in the guard: ${after}`,
          );
        }
      },
    );
  }

  for (const sandbox of ["namespace", "container"] as const) {
    it(
      `${sandbox}: a run records host_block in config.json, and the endpoint refuses the agent`,
      namespaceRan(sandbox),
      async (t) => {
        if (sandbox === "container" && !(await engineOrSkip(t))) return;
        const host = addresses.find((a) => net.isIPv4(a)) as string;
        const probe = `timeout 30 bash -c 'exec 3<>/dev/tcp/${host}/${policyPort}' 2>/dev/null && echo open || echo closed`;
        const script = {
          conversations: [
            {
              replies: [
                {
                  tool_calls: [
                    {
                      name: "bash",
                      arguments: {
                        command: `${probe} > /logs/agent/endpoint.txt; echo bookworm > /app/codename.txt`,
                      },
                    },
                  ],
                },
                { tool_calls: [{ name: "submit", arguments: {} }] },
                { content: "Done." },
              ],
            },
          ],
        };
        if (!online.http) {
          t.skip(
            "deb.debian.org:80 is not reachable from this machine, and the task's verifier fetches from it",
          );
          return;
        }
        const served = await startScriptedEndpoint({ script, host: "0.0.0.0" });
        const endpointPort = Number(new URL(served.baseUrl).port);
        const task = path.join(scratch(), `tasks-${sandbox}/network-verifier`);
        await fs.cp(path.join(FIXTURES, "network-verifier"), task, { recursive: true });
        // The fixture's few seconds are not enough on a busy machine (as in network-isolation.test.ts).
        const toml = await fs.readFile(path.join(task, "task.toml"), "utf8");
        await fs.writeFile(
          path.join(task, "task.toml"),
          toml.replace(/timeout_sec = \d+/g, "timeout_sec = 120"),
        );
        const jobsDir = path.join(scratch(), sandbox);
        try {
          // The gateway calls the endpoint at the host's own address: the agent may not.
          const result = await new Evaluation({
            tasks: task,
            agent: "bench-agent",
            model: "vllm/scripted",
            sandbox,
            retryAttempts: 0,
            env: {},
            jobsDir,
            policy: { baseUrl: `http://${host}:${endpointPort}/v1` },
          }).run();
          const [r] = result.results;
          assert.equal(r?.error, null, r?.error ?? "");
          const dir = (await rollouts(jobsDir))[0]?.dir ?? "";
          const config = JSON.parse(await fs.readFile(path.join(dir, "config.json"), "utf8"));
          assert.equal(config.host_block.applied, "nft", JSON.stringify(config.host_block));
          assert.equal(config.host_block.endpoint, `${host}:${endpointPort}`);
          assert.ok(config.host_block.addresses >= 1);
          assert.equal((await fs.readFile(path.join(dir, "agent/endpoint.txt"), "utf8")).trim(), "closed");
          assert.ok(
            served.requests.length >= 2,
            `the gateway reached the endpoint: ${JSON.stringify(served.requests.map((q) => q.path))}`,
          );
          assert.equal(r?.rewards?.reward, 1);
        } finally {
          await served.close();
        }
      },
    );
  }
});
