// The agent reaches the model only through the gateway, which records every call. A sandbox with
// a network of its own (slirp4netns, an engine's bridge) still routes to the host's own addresses
// (eth0's, docker0's, a bridge's gateway), where any server bound to 0.0.0.0 answers; and the
// policy endpoint (vLLM on the host or on another machine) may be reachable as it is. Both sandboxes
// close that here, one way: a firewall table inside the sandbox's network namespace, installed from
// the host (nsenter, the host's nft or iptables-restore) before the agent runs. The agent has no
// CAP_NET_ADMIN over that namespace, so it cannot remove it. DNS (port 53) to the host stays open:
// an engine's bridge may serve the sandbox's resolver there (Podman's aardvark-dns).
import { spawn } from "node:child_process";
import { lookup } from "node:dns/promises";
import { existsSync, promises as fs } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { HostBlockRecord, PolicyEndpoint } from "./types.js";

export interface HostBlockPlan {
  host4: string[];
  host6: string[];
  /** The endpoint's addresses (not loopback: the sandbox's 127.0.0.1 is its own) and its port. */
  endpoint: { label: string; v4: string[]; v6: string[]; port: number } | null;
  /**
   * The sandbox's interfaces to the outside (slirp's tap0, a container's eth0): an egress hook
   * there drops what a root agent's raw packet socket (CAP_NET_RAW, AF_PACKET) sends past the
   * output hook; slirp4netns or the bridge would carry it to the host otherwise (seen here).
   */
  devices: string[];
  /**
   * The sandbox's own IPv4 addresses, where the host's guard (host-guard.ts) knows it by them: a
   * packet out of its interfaces with any other source is dropped, so a root agent's raw socket
   * cannot pass for another machine and slip past the guard.
   */
  own4?: string[];
}

/** The host as slirp4netns shows it (cut off by --disable-host-loopback; closed here as well). */
export const SLIRP_HOST = "10.0.2.2";

export const HOST_BLOCK_FIX = "install nftables (apt-get install nftables) or iptables on the host";

const TOOL_DIRS = ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"];

/** The endpoint of a base URL such as http://gpu-box:8000/v1 (default ports for http and https). */
export function policyEndpointOf(baseUrl: string): PolicyEndpoint | null {
  try {
    const url = new URL(baseUrl);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return host ? { host, port } : null;
  } catch {
    return null;
  }
}

export function endpointLabel(e: PolicyEndpoint): string {
  return net.isIPv6(e.host) ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}

const isLoopback = (a: string) => a === "::1" || /^127\./.test(a) || /^::ffff:127\./i.test(a);

/**
 * Every address the host answers on, loopback aside (inside the sandbox that is its own), from the
 * kernel's local routing table and IPv6 address list, not os.networkInterfaces(): that omits
 * interfaces that are down (docker0 before its first container), and the kernel delivers to their
 * addresses all the same.
 */
export async function hostAddresses(): Promise<{ v4: string[]; v6: string[] }> {
  const v4 = new Set<string>();
  const v6 = new Set<string>();
  const trie = await fs.readFile("/proc/net/fib_trie", "utf8").catch(() => "");
  let last: string | null = null;
  for (const line of trie.split("\n")) {
    const leaf = /^[\s|]*\|-- (\d+\.\d+\.\d+\.\d+)$/.exec(line);
    if (leaf) last = leaf[1] ?? null;
    else if (last && /^\s*\/32 host LOCAL$/.test(line)) v4.add(last);
  }
  const inet6 = await fs.readFile("/proc/net/if_inet6", "utf8").catch(() => "");
  for (const line of inet6.split("\n")) {
    const hex = line.split(/\s+/)[0] ?? "";
    if (/^[0-9a-f]{32}$/i.test(hex)) v6.add(v6FromHex(hex));
  }
  return {
    v4: [...v4].filter((a) => !isLoopback(a)).sort(),
    v6: [...v6].filter((a) => a !== "0:0:0:0:0:0:0:1").sort(),
  };
}

/** What to close for one sandbox: the host's addresses now, the endpoint resolved now. */
export async function planHostBlock(
  endpoint: PolicyEndpoint | null | undefined,
  where: { devices: string[]; extra?: string[]; own4?: string[] },
): Promise<HostBlockPlan> {
  const { devices, extra = [], own4 } = where;
  const host = await hostAddresses();
  const host4 = [...new Set([...host.v4, ...extra.filter((a) => net.isIPv4(a))])].sort();
  const host6 = [...new Set([...host.v6, ...extra.filter((a) => net.isIPv6(a))])].sort();
  const own = own4 && own4.length > 0 ? { own4 } : {};
  if (!endpoint) return { host4, host6, endpoint: null, devices, ...own };
  const addresses = net.isIP(endpoint.host)
    ? [endpoint.host]
    : await lookup(endpoint.host, { all: true }).then(
        (all) => all.map((a) => a.address),
        // The gateway cannot reach a name that does not resolve either; nothing to close.
        () => [],
      );
  const outside = addresses.filter((a) => !isLoopback(a));
  return {
    host4,
    host6,
    endpoint: {
      label: endpointLabel(endpoint),
      v4: outside.filter((a) => net.isIPv4(a)),
      v6: outside.filter((a) => net.isIPv6(a)),
      port: endpoint.port,
    },
    devices,
    ...own,
  };
}

/**
 * The nft tables, in one transaction: `inet` on the output hook rejects (a refused connect, at
 * once); `netdev` on the devices' egress hook drops the same (raw packets). In each: the endpoint
 * first (even on port 53), then DNS to the host, then the host.
 */
export function nftRuleset(plan: HostBlockPlan, withEgress = plan.devices.length > 0): string {
  const set = (name: string, type: string, elements: string[]) =>
    `  set ${name} {\n    type ${type};\n${elements.length > 0 ? `    elements = { ${elements.join(", ")} };\n` : ""}  }`;
  const e = plan.endpoint;
  const sets = [
    set("host4", "ipv4_addr", plan.host4),
    set("host6", "ipv6_addr", plan.host6),
    set("endpoint4", "ipv4_addr . inet_service", e ? e.v4.map((a) => `${a} . ${e.port}`) : []),
    set("endpoint6", "ipv6_addr . inet_service", e ? e.v6.map((a) => `${a} . ${e.port}`) : []),
    ...(plan.own4 ? [set("own4", "ipv4_addr", plan.own4)] : []),
  ];
  const devices = plan.devices.map((d) => JSON.stringify(d)).join(", ");
  // First: a packet that says it is from another address (a raw socket's) goes nowhere.
  const spoof = (hook: "output" | "egress") =>
    plan.own4 && plan.devices.length > 0
      ? [`    ${hook === "output" ? `oifname { ${devices} } ` : ""}ip saddr != @own4 drop`]
      : [];
  const rules = (close: (proto: "tcp" | "other") => string) => [
    `    ip daddr . tcp dport @endpoint4 ${close("tcp")}`,
    `    ip6 daddr . tcp dport @endpoint6 ${close("tcp")}`,
    "    ip daddr @host4 meta l4proto { tcp, udp } th dport 53 accept",
    "    ip6 daddr @host6 meta l4proto { tcp, udp } th dport 53 accept",
    `    ip daddr @host4 meta l4proto tcp ${close("tcp")}`,
    `    ip6 daddr @host6 meta l4proto tcp ${close("tcp")}`,
    `    ip daddr @host4 ${close("other")}`,
    `    ip6 daddr @host6 ${close("other")}`,
  ];
  const reject = (p: "tcp" | "other") =>
    p === "tcp" ? "reject with tcp reset" : "reject with icmpx type admin-prohibited";
  const lines = [
    "table inet benchflow_host_block {",
    ...sets,
    "  chain output {",
    "    type filter hook output priority 0; policy accept;",
    ...spoof("output"),
    ...rules(reject),
    "  }",
    "}",
  ];
  if (withEgress) {
    lines.push(
      "table netdev benchflow_host_block {",
      ...sets,
      "  chain egress {",
      `    type filter hook egress devices = { ${devices} } priority 0; policy accept;`,
      ...spoof("egress"),
      ...rules(() => "drop"),
      "  }",
      "}",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The same rules for iptables-restore / ip6tables-restore (where nft is missing). */
export function iptablesRules(plan: HostBlockPlan, family: 4 | 6): string {
  const hosts = family === 4 ? plan.host4 : plan.host6;
  const bits = family === 4 ? 32 : 128;
  const prohibited = family === 4 ? "icmp-admin-prohibited" : "icmp6-adm-prohibited";
  const lines = ["*filter"];
  const e = plan.endpoint;
  for (const a of e ? (family === 4 ? e.v4 : e.v6) : [])
    lines.push(`-A OUTPUT -d ${a}/${bits} -p tcp --dport ${e?.port} -j REJECT --reject-with tcp-reset`);
  for (const a of hosts) {
    lines.push(`-A OUTPUT -d ${a}/${bits} -p udp --dport 53 -j ACCEPT`);
    lines.push(`-A OUTPUT -d ${a}/${bits} -p tcp --dport 53 -j ACCEPT`);
    lines.push(`-A OUTPUT -d ${a}/${bits} -p tcp -j REJECT --reject-with tcp-reset`);
    lines.push(`-A OUTPUT -d ${a}/${bits} -j REJECT --reject-with ${prohibited}`);
  }
  lines.push("COMMIT", "");
  return lines.join("\n");
}

export type FirewallTool = "nft" | "iptables";

/** The host's nft (preferred) or iptables-restore pair, or null. */
export function firewallTool(prefer?: FirewallTool): { tool: FirewallTool; paths: string[] } | null {
  const find = (name: string) => TOOL_DIRS.map((d) => path.join(d, name)).find((p) => existsSync(p)) ?? null;
  const nft = find("nft");
  const v4 = find("iptables-restore");
  const v6 = find("ip6tables-restore");
  const iptables = v4 && v6 ? { tool: "iptables" as const, paths: [v4, v6] } : null;
  if (prefer === "iptables") return iptables;
  return nft ? { tool: "nft", paths: [nft] } : iptables;
}

export interface ApplyOptions {
  /** Force one tool (tests); by default nft, else iptables-restore. */
  tool?: FirewallTool;
}

/**
 * Installs the rules through `joinPrefix` (nsenter into the sandbox's network namespace, and its
 * user namespace where we are not root). Never throws: a failure is the record's `applied`.
 */
export async function applyHostBlock(
  joinPrefix: string[],
  plan: HostBlockPlan,
  options: ApplyOptions = {},
): Promise<HostBlockRecord> {
  const record = (applied: string): HostBlockRecord => ({
    addresses: plan.host4.length + plan.host6.length,
    endpoint: plan.endpoint?.label ?? null,
    applied,
  });
  const found = firewallTool(options.tool);
  if (found === null)
    return record(`not_applied: neither nft nor iptables-restore is on this machine (${HOST_BLOCK_FIX})`);
  const rawPass = "a root agent's raw packets pass";
  try {
    if (found.tool === "iptables") {
      await runFirewall([...joinPrefix, found.paths[0] as string], iptablesRules(plan, 4));
      await runFirewall([...joinPrefix, found.paths[1] as string], iptablesRules(plan, 6));
      return record(`iptables (${rawPass})`);
    }
    const nft = [...joinPrefix, found.paths[0] as string, "-f", "-"];
    try {
      await runFirewall(nft, nftRuleset(plan));
      return record(plan.devices.length > 0 ? "nft" : `nft (${rawPass})`);
    } catch (err) {
      // A kernel before 5.16 has no egress hook: the output hook alone still stops every socket.
      if (plan.devices.length === 0) throw err;
      await runFirewall(nft, nftRuleset(plan, false));
      return record(`nft (output hook only, ${rawPass}: ${(err as Error).message})`);
    }
  } catch (err) {
    return record(`not_applied: ${(err as Error).message}`);
  }
}

/** A record for a sandbox where no rules went in: "no_network", or "not_applied: <why>". */
export function hostBlockRecordOf(
  endpoint: PolicyEndpoint | null | undefined,
  applied: string,
): HostBlockRecord {
  return { addresses: 0, endpoint: endpoint ? endpointLabel(endpoint) : null, applied };
}

/** The warning a sandbox shows once when the record says the rules are not in. */
export function hostBlockWarning(record: HostBlockRecord): string | null {
  if (!record.applied.startsWith("not_applied")) {
    // Without root the guard cannot go in, and the docs say what that leaves; as root it should have.
    const guard = record.guard ?? "";
    if (!guard.startsWith("not_applied") || guard.includes("needs root")) return null;
    return `host guard: ${guard}: an address the host gains while the agent runs (a new container network's bridge) is not closed to it`;
  }
  return `host block: ${record.applied}: the agent may reach servers on the host${record.endpoint ? ` and the policy endpoint (${record.endpoint})` : ""} without the gateway`;
}

/** Runs a firewall tool with its rules on stdin; rejects with the tool's own message. */
export function runFirewall(argv: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = argv as [string, ...string[]];
    const child = spawn(file, args, { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-400);
    });
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${path.basename(argv.find((a) => /(nft|tables-restore)$/.test(a)) ?? file)} failed (${code ?? signal}): ${stderr.trim() || "no message"}`,
            ),
          ),
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);
  });
}

/** /proc/net/if_inet6's 32 hex digits → eight groups (valid for nft and iptables, and readable). */
function v6FromHex(hex: string): string {
  return (hex.toLowerCase().match(/.{4}/g) ?? []).map((g) => g.replace(/^0+(?=.)/, "")).join(":");
}
