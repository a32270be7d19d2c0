// The host block's parts on the real kernel: the host's addresses (a down interface's too), the
// endpoint from a base URL, and both tools' rules in a real network namespace (slirp4netns, as the
// namespace sandbox makes it), where a server on the host's 0.0.0.0 stops answering.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import {
  applyHostBlock,
  firewallTool,
  hostAddresses,
  hostBlockWarning,
  planHostBlock,
  policyEndpointOf,
  runFirewall,
  SLIRP_HOST,
} from "./host-block.js";
import { GUARD_TABLE, guardRuleset } from "./host-guard.js";
import { type SandboxNetwork, startSandboxNetwork } from "./namespace/netns.js";

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

describe("the host's addresses", () => {
  it("come from the kernel, a down interface's included (os.networkInterfaces() omits it), loopback left out", async (t) => {
    if (!isRoot) return t.skip("making a network namespace with an interface of its own needs root");
    // A fresh network namespace with one veth interface that is down: nothing on the host changes.
    const script = `import("${path.join(import.meta.dirname, "host-block.ts")}").then(async (m) => {
      const os = await import("node:os");
      console.log(JSON.stringify({ found: await m.hostAddresses(), node: Object.keys(os.networkInterfaces()) }));
    });`;
    const { stdout } = await run("unshare", [
      "--net",
      "sh",
      "-c",
      'ip link add bf0 type veth peer name bf1 && ip addr add 198.51.100.77/24 dev bf0 && ip -6 addr add fd00:bf::77/64 dev bf0 nodad && ip link set lo up && exec "$@"',
      "sh",
      process.execPath,
      "--import",
      "tsx",
      "-e",
      script,
    ]);
    const { found, node } = JSON.parse(stdout.trim().split("\n").pop() as string);
    assert.ok(!node.includes("bf0"), "os.networkInterfaces() lists the down interface after all");
    assert.deepEqual(found.v4, ["198.51.100.77"]);
    assert.deepEqual(found.v6, ["fd00:bf:0:0:0:0:0:77"]);
  });

  it("include every address `ip addr` shows here, but loopback", async (t) => {
    const shown = await run("ip", ["-j", "addr", "show"]).catch(() => null);
    if (shown === null) return t.skip("iproute2's ip is not on this machine");
    const found = await hostAddresses();
    const list = new net.BlockList();
    for (const a of found.v4) list.addAddress(a, "ipv4");
    for (const a of found.v6) list.addAddress(a, "ipv6");
    const ifaces = JSON.parse(shown.stdout) as { addr_info?: { local: string; family: string }[] }[];
    for (const a of ifaces.flatMap((i) => i.addr_info ?? [])) {
      const family = a.family === "inet" ? "ipv4" : "ipv6";
      const loopback = a.local === "::1" || a.local.startsWith("127.");
      assert.equal(list.check(a.local, family), !loopback, a.local);
    }
  });
});

describe("the policy endpoint", () => {
  it("is the base URL's host and port, 80 and 443 by default", () => {
    assert.deepEqual(policyEndpointOf("http://gpu-box:8000/v1"), { host: "gpu-box", port: 8000 });
    assert.deepEqual(policyEndpointOf("https://api.example.com/v1"), { host: "api.example.com", port: 443 });
    assert.deepEqual(policyEndpointOf("http://[fd00::5]/v1"), { host: "fd00::5", port: 80 });
    assert.equal(policyEndpointOf("not a url"), null);
  });

  it("on the host's loopback is left to the sandbox's own loopback (closing it would close the task's)", async () => {
    const plan = await planHostBlock({ host: "127.0.0.1", port: 8000 }, { devices: [] });
    assert.deepEqual(plan.endpoint, { label: "127.0.0.1:8000", v4: [], v6: [], port: 8000 });
    const v6 = await planHostBlock({ host: "fd00::5", port: 80 }, { devices: [] });
    assert.deepEqual(v6.endpoint, { label: "[fd00::5]:80", v4: [], v6: ["fd00::5"], port: 80 });
  });
});

describe("the rules in a network namespace with slirp4netns", { skip: !isRoot && "needs root" }, () => {
  let any: net.Server;
  let port: number;
  let host: string;
  before(async () => {
    any = net.createServer((c) => c.end("ANY\n"));
    await new Promise<void>((r) => any.listen(0, "0.0.0.0", r));
    port = (any.address() as net.AddressInfo).port;
    host = (await hostAddresses()).v4[0] as string;
  });
  after(() => new Promise((r) => any.close(r)));

  /** What the host's server says inside the namespace: "ANY", or "none". */
  async function reach(network: SandboxNetwork): Promise<string> {
    const [file, ...args] = network.joinPrefix as [string, ...string[]];
    const probe = `timeout 30 bash -c 'exec 3<>/dev/tcp/${host}/${port} && head -n1 <&3' 2>/dev/null || echo none`;
    return (await run(file, [...args, "bash", "-c", probe])).stdout.trim();
  }

  async function withNetwork(work: (n: SandboxNetwork) => Promise<void>): Promise<void> {
    const network = await startSandboxNetwork(true);
    try {
      await work(network);
    } finally {
      await network.close();
    }
  }

  async function flush(network: SandboxNetwork): Promise<void> {
    const [file, ...args] = network.joinPrefix as [string, ...string[]];
    await run(file, [...args, "nft", "flush", "ruleset"]);
  }

  /** The sandbox's own rules alone: the host's guard (host-guard.ts) off for `work`, then back. */
  async function withoutGuard(work: () => Promise<void>): Promise<void> {
    for (const chain of ["input", "output"]) await run("nft", ["flush", "chain", "inet", GUARD_TABLE, chain]);
    try {
      await work();
    } finally {
      await runFirewall(["nft", "-f", "-"], guardRuleset());
    }
  }

  it("nft: closed; with the table gone, the same server answers (the table is what closes it)", async () => {
    await withNetwork(async (network) => {
      assert.equal(network.hostBlock.applied, "nft");
      assert.equal(network.hostBlock.guard, "nft");
      await withoutGuard(async () => {
        assert.equal(await reach(network), "none");
        await flush(network);
        assert.equal(await reach(network), "ANY");
      });
      // And the guard alone, the sandbox's rules gone, closes it as well.
      assert.equal(await reach(network), "none");
    });
  });

  it("iptables-restore, where nft is missing: closed as well", async (t) => {
    if (firewallTool("iptables") === null) return t.skip("iptables-restore is not on this machine");
    await withNetwork(async (network) => {
      await flush(network);
      const plan = await planHostBlock(null, { devices: ["tap0"], extra: [SLIRP_HOST] });
      const record = await applyHostBlock(network.joinPrefix, plan, { tool: "iptables" });
      assert.match(record.applied, /^iptables \(a root agent's raw packets pass\)$/);
      assert.equal(await reach(network), "none");
    });
  });

  it("an egress hook that cannot be made leaves the output hook, and the record says so", async () => {
    await withNetwork(async (network) => {
      await flush(network);
      // A device name longer than Linux allows: only the egress table fails, as on a kernel without the hook.
      const plan = await planHostBlock(null, { devices: ["a-name-longer-than-ifnamsiz"] });
      const record = await applyHostBlock(network.joinPrefix, plan);
      assert.match(record.applied, /^nft \(output hook only, a root agent's raw packets pass: /);
      assert.equal(await reach(network), "none");
    });
  });

  it("a namespace that cannot be entered is recorded as not applied, with a warning, never thrown", async () => {
    const plan = await planHostBlock({ host: "192.0.2.99", port: 8000 }, { devices: [] });
    const record = await applyHostBlock(["nsenter", `--net=${os.tmpdir()}/no-such-netns`], plan);
    assert.match(record.applied, /^not_applied: nft failed/);
    assert.equal(record.endpoint, "192.0.2.99:8000");
    assert.match(
      hostBlockWarning(record) ?? "",
      /^host block: not_applied: .*the policy endpoint \(192\.0\.2\.99:8000\)/,
    );
    assert.equal(hostBlockWarning({ ...record, applied: "nft" }), null);
  });
});
