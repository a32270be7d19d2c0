// The container's network, and how the one host server (the model gateway) is reached from it.
// Preferred: the relay (relay.ts), which works with any network mode and keeps "no network"
// strict; network on is the engine's bridge, where 127.0.0.1 is the container's own loopback and
// the host's loopback is out of reach (checked on Podman and Docker). Where the relay cannot run,
// the engine's own host access is used and the record says plainly, with network on or off, that
// the sandbox can then reach more than the gateway.
import { existsSync } from "node:fs";
import type { HostService } from "../../relay.js";
import type { Engine } from "../engine/engine.js";

export interface NetworkPlan {
  /** HostConfig.NetworkMode. */
  mode: string;
  /** Start the relay after the container starts. */
  relay: boolean;
  /** The gateway's address inside the sandbox when no relay is used. */
  directUrl: string | null;
  /** "enforced" (no network), "public", or "not_enforced: <why>". */
  enforcement: string;
}

/** Why the relay cannot run for this engine (checked before the container exists), or null. */
export function relayPrecheck(engine: Engine): string | null {
  if (!engine.isLocal) return `the engine at ${engine.socket} is not on this machine`;
  if (process.getuid?.() !== 0) return "entering a container's network namespace needs root";
  if (!["/usr/bin/nsenter", "/bin/nsenter", "/usr/sbin/nsenter"].some((p) => existsSync(p)))
    return "nsenter is missing";
  return null;
}

export function planNetwork(engine: Engine, network: boolean, service: HostService | undefined): NetworkPlan {
  const enforcement = network ? "public" : "enforced";
  if (!service) return { mode: network ? "bridge" : "none", relay: false, directUrl: null, enforcement };
  const why = relayPrecheck(engine);
  if (why === null) return { mode: network ? "bridge" : "none", relay: true, directUrl: null, enforcement };
  if (engine.isPodman) {
    return {
      mode: network
        ? "slirp4netns:allow_host_loopback=true"
        : "slirp4netns:allow_host_loopback=true,outbound_addr=127.0.0.1",
      relay: false,
      directUrl: `http://10.0.2.2:${service.port}`,
      enforcement: network
        ? `not_enforced: the network is on, and every service on the host's loopback is reachable too, not only the gateway (no relay: ${why})`
        : `not_enforced: the internet is blocked but every service on the host's loopback is reachable, not only the gateway (no relay: ${why})`,
    };
  }
  return {
    mode: "host",
    relay: false,
    directUrl: `http://127.0.0.1:${service.port}`,
    enforcement: network
      ? `not_enforced: the network is on, but it is the host's own, its loopback included (no relay: ${why})`
      : `not_enforced: the sandbox shares the host's network (no relay: ${why})`,
  };
}
