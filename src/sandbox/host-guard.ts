// The host's own side of host-block.ts. The rules inside a sandbox's network namespace can name only
// the addresses the host had when the sandbox started; an address that appears later (the bridge of
// a sibling rollout's compose network, a VPN coming up, a new container network) answered the agent
// (seen on Docker: reward 1.0 from a server on 0.0.0.0). So, where bench runs as root, one table in
// the host's own network namespace refuses what a sandbox sends to the host itself, whatever address
// it names: the kernel decides per packet whether the destination is this host. Which traffic is a
// sandbox's:
// - a container's packets, by their source address, on the host's input hook (only packets for the
//   host itself reach that hook: the internet and sidecars are forwarded or bridged). The rules in
//   the container drop any packet with another source (host-block.ts `own4`), so a root agent's raw
//   socket cannot forge one;
// - the namespace sandbox's slirp4netns, which turns the sandbox's connections into the host's own
//   sockets: it runs as a uid of its own (SLIRP_UID), matched on the output hook.
// DNS (port 53) stays open, as in host-block.ts. The table lives on after bench (a set element has a
// timeout, so a crashed run's addresses do not stay closed for long); nothing in it touches
// traffic of anything but the sandboxes.
import net from "node:net";
import { firewallTool, runFirewall } from "./host-block.js";

export const GUARD_TABLE = "benchflow_host_guard";

/**
 * The uid slirp4netns runs as: no account has it (it is near the top of the 32-bit range, far from
 * the ranges distributions and subuid files hand out), so the output rule matches slirp alone.
 */
export const SLIRP_UID = 2_147_480_001;

/** How long a container's address stays in the set if its rollout never takes it out (a crash). */
const ELEMENT_TIMEOUT = "1d";

/** The table and its rules; sets keep their elements when it is loaded again (chains are flushed). */
export function guardRuleset(): string {
  const t = `inet ${GUARD_TABLE}`;
  return `${[
    `table ${t} {`,
    "  set sandbox4 { type ipv4_addr; flags timeout; }",
    "  set sandbox6 { type ipv6_addr; flags timeout; }",
    "  chain input { type filter hook input priority -10; policy accept; }",
    "  chain output { type filter hook output priority -10; policy accept; }",
    "}",
    `flush chain ${t} input`,
    `flush chain ${t} output`,
    `add rule ${t} input ip saddr @sandbox4 meta l4proto { tcp, udp } th dport 53 accept`,
    `add rule ${t} input ip6 saddr @sandbox6 meta l4proto { tcp, udp } th dport 53 accept`,
    `add rule ${t} input ip saddr @sandbox4 meta l4proto tcp reject with tcp reset`,
    `add rule ${t} input ip6 saddr @sandbox6 meta l4proto tcp reject with tcp reset`,
    `add rule ${t} input ip saddr @sandbox4 meta l4proto udp reject with icmpx type admin-prohibited`,
    `add rule ${t} input ip6 saddr @sandbox6 meta l4proto udp reject with icmpx type admin-prohibited`,
    `add rule ${t} output meta skuid ${SLIRP_UID} meta l4proto { tcp, udp } th dport 53 accept`,
    `add rule ${t} output meta skuid ${SLIRP_UID} fib daddr type local meta l4proto tcp reject with tcp reset`,
    `add rule ${t} output meta skuid ${SLIRP_UID} fib daddr type local meta l4proto udp reject with icmpx type admin-prohibited`,
  ].join("\n")}\n`;
}

let installed: Promise<string | null> | null = null;

/**
 * Loads the table once per process. Resolves to null when it is in, else why not (not root, no
 * nft): the sandbox's own rules then stand alone and the record says so.
 */
export function ensureHostGuard(): Promise<string | null> {
  installed ??= (async () => {
    if (process.getuid?.() !== 0) return "the host's firewall needs root";
    const found = firewallTool("nft");
    if (!found) return "nft is not on this machine (apt-get install nftables)";
    try {
      await runFirewall([found.paths[0] as string, "-f", "-"], guardRuleset());
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  })();
  return installed;
}

/** A container's addresses in the guard's sets, and how to take them out again. */
export interface GuardLease {
  addresses: string[];
  release(): Promise<void>;
}

/** Puts a container's addresses into the sets; throws when the guard is not in. */
export async function guardAddresses(addresses: string[]): Promise<GuardLease> {
  const why = await ensureHostGuard();
  if (why) throw new Error(why);
  const tool = firewallTool("nft")?.paths[0] as string;
  const elements = (withTimeout: boolean) =>
    addresses
      .map((a) => {
        const set = net.isIPv6(a) ? "sandbox6" : "sandbox4";
        return `${set} { ${a}${withTimeout ? ` timeout ${ELEMENT_TIMEOUT}` : ""} }`;
      })
      .map((e) => `inet ${GUARD_TABLE} ${e}`);
  // Adding an element that is there already (an address a crashed run left) is no error.
  await runFirewall(
    [tool, "-f", "-"],
    elements(true)
      .map((e) => `add element ${e}\n`)
      .join(""),
  );
  let released = false;
  return {
    addresses,
    release: async () => {
      if (released) return;
      released = true;
      for (const e of elements(false))
        await runFirewall([tool, "-f", "-"], `delete element ${e}\n`).catch(() => {});
    },
  };
}
