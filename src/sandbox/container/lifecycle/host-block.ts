// The container's side of host-block.ts: the rules go into the container's network namespace
// (nsenter from the host, as the relay enters it) once it runs, on the engine's bridge and on a
// compose rollout's network alike; and the container's addresses go into the host's own guard
// (host-guard.ts), which closes the host addresses that appear after this moment too. Where either
// cannot be done the record and a warning say so.
import { applyHostBlock, hostBlockRecordOf, planHostBlock } from "../../host-block.js";
import { type GuardLease, guardAddresses } from "../../host-guard.js";
import type { HostBlockRecord, PolicyEndpoint } from "../../types.js";
import type { Engine } from "../engine/engine.js";
import { relayPrecheck } from "./network.js";

export interface ClosedHost {
  record: HostBlockRecord;
  /** The guard's hold on the container's addresses: released when the sandbox stops. */
  lease: GuardLease | null;
}

interface ContainerNetInfo {
  State?: { Pid?: number };
  NetworkSettings?: { Networks?: Record<string, { IPAddress?: string; GlobalIPv6Address?: string }> };
}

export async function closeHostFor(
  engine: Engine,
  id: string,
  networkMode: string,
  endpoint: PolicyEndpoint | undefined,
): Promise<ClosedHost> {
  const notApplied = (why: string) => ({
    record: hostBlockRecordOf(endpoint, `not_applied: ${why}`),
    lease: null,
  });
  if (networkMode === "none") return { record: hostBlockRecordOf(endpoint, "no_network"), lease: null };
  if (networkMode === "host") return notApplied("the sandbox shares the host's network");
  if (networkMode.startsWith("slirp4netns"))
    return notApplied("the engine's slirp4netns opens the host's loopback to the sandbox");
  const why = relayPrecheck(engine);
  if (why) return notApplied(why);
  const info = await engine.client.json<ContainerNetInfo>("GET", `/containers/${id}/json`);
  const pid = info.State?.Pid ?? 0;
  if (!pid) return notApplied("the engine reports no process for the container");
  const networks = Object.values(info.NetworkSettings?.Networks ?? {});
  const own4 = networks.map((n) => n.IPAddress ?? "").filter((a) => a !== "");
  const own6 = networks.map((n) => n.GlobalIPv6Address ?? "").filter((a) => a !== "");
  let lease: GuardLease | null = null;
  let guard = "nft";
  try {
    if (own4.length === 0 && own6.length === 0)
      throw new Error("the engine reports no address for the container");
    lease = await guardAddresses([...own4, ...own6]);
  } catch (err) {
    guard = `not_applied: ${(err as Error).message}`;
  }
  // Docker and Podman alike name the container's one interface eth0.
  const plan = await planHostBlock(endpoint, { devices: ["eth0"], ...(lease ? { own4 } : {}) });
  const record = await applyHostBlock(["nsenter", `--net=/proc/${pid}/ns/net`], plan);
  return { record: { ...record, guard }, lease };
}
