// The container's side of host-block.ts: the rules go into the container's network namespace
// (nsenter from the host, as the relay enters it) once it runs, on the engine's bridge and on a
// compose rollout's network alike. Where that cannot be done the record and a warning say so.
import { applyHostBlock, hostBlockRecordOf, planHostBlock } from "../../host-block.js";
import type { HostBlockRecord, PolicyEndpoint } from "../../types.js";
import type { Engine } from "../engine/engine.js";
import { relayPrecheck } from "./network.js";

export async function closeHostFor(
  engine: Engine,
  id: string,
  networkMode: string,
  endpoint: PolicyEndpoint | undefined,
): Promise<HostBlockRecord> {
  const notApplied = (why: string) => hostBlockRecordOf(endpoint, `not_applied: ${why}`);
  if (networkMode === "none") return hostBlockRecordOf(endpoint, "no_network");
  if (networkMode === "host") return notApplied("the sandbox shares the host's network");
  if (networkMode.startsWith("slirp4netns"))
    return notApplied("the engine's slirp4netns opens the host's loopback to the sandbox");
  const why = relayPrecheck(engine);
  if (why) return notApplied(why);
  const info = await engine.client.json<{ State?: { Pid?: number } }>("GET", `/containers/${id}/json`);
  const pid = info.State?.Pid ?? 0;
  if (!pid) return notApplied("the engine reports no process for the container");
  // Docker and Podman alike name the container's one interface eth0.
  const plan = await planHostBlock(endpoint, { devices: ["eth0"] });
  return applyHostBlock(["nsenter", `--net=/proc/${pid}/ns/net`], plan);
}
