// What a run with --executor slurm does once, before its first rollout: cancel the jobs a killed run
// left behind, check that every node sees the jobs folder, and decide the gateway's address.
import { promises as dns } from "node:dns";
import os from "node:os";
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import type { RolloutPlan } from "../../rollout/types.js";
import type { RolloutResult } from "../../schemas/result.js";
import type { PlannedEvaluation } from "../plan.js";
import type { ResolvedPolicy } from "../policy.js";
import { slurm } from "./commands.js";
import { checkNodesSeeJobsDir, reapLeftovers, type SlurmSettings, slurmExecutor } from "./executor.js";

export interface OpenSlurm {
  startRollout(plan: RolloutPlan): Promise<RolloutResult>;
  /** Waits for the SLURM jobs of finished rollouts to end (their nodes' teardown). */
  settle(): Promise<void>;
  /** The policy with its gateway listening where the nodes reach it. */
  policyFor(policy: ResolvedPolicy): ResolvedPolicy;
  nodes: string[];
  gatewayHost: string;
}

export async function openSlurm(
  plan: PlannedEvaluation,
  s: SlurmSettings,
  warn: (m: string) => void,
): Promise<OpenSlurm> {
  const reaped = await reapLeftovers();
  if (reaped.cancelled.length > 0)
    warn(
      `${opt("executor", "slurm")}: cancelled ${reaped.cancelled.length} SLURM job(s) a killed run left behind (${reaped.cancelled.join(", ")})`,
    );
  if (reaped.pending.length > 0)
    warn(
      `${opt("executor", "slurm")}: SLURM job(s) ${reaped.pending.join(", ")} of a killed run were cancelled but have not ended yet (a node down?); they write nothing into this run's rollouts`,
    );
  const nodes = await checkNodesSeeJobsDir(
    plan.jobsDir,
    s,
    plan.tasks.map((t) => t.task.dir),
  );
  const gatewayHost = s.gatewayHost ?? (await addressTowards(nodes[0] as string));
  const executor = slurmExecutor(s, nodes.length);
  return {
    nodes,
    gatewayHost,
    startRollout: executor.startRollout,
    settle: executor.settle,
    policyFor: (policy) => ({ ...policy, gateway: { ...policy.gateway, host: gatewayHost } }),
  };
}

/**
 * This host's address on the network a node is on: the local interface whose subnet holds the
 * node's address (scontrol's NodeAddr). Loopback only when the node is this very host.
 */
export async function addressTowards(node: string): Promise<string> {
  const r = await slurm("scontrol", ["show", "node", "-o", node]);
  const addrField = /NodeAddr=(\S+)/.exec(r.stdout)?.[1] ?? node;
  const addr = /^\d+\.\d+\.\d+\.\d+$/.test(addrField)
    ? addrField
    : await dns.lookup(addrField, { family: 4 }).then(
        (a) => a.address,
        () => null,
      );
  const found = addr === null ? null : hostAddressFor(addr, Object.values(os.networkInterfaces()).flat());
  if (found) return found;
  throw new UserInputError(
    `${opt("executor", "slurm")}: cannot tell this host's address on node ${node}'s network (NodeAddr ${addrField}); pass ${opt("executor.gatewayHost")} with an address the nodes reach`,
  );
}

function toInt(ip: string): number {
  return ip.split(".").reduce((n, part) => (n << 8) + Number(part), 0) >>> 0;
}

function sameSubnet(a: string, b: string, mask: string): boolean {
  const m = toInt(mask);
  return (toInt(a) & m) === (toInt(b) & m);
}

/** Of this host's interfaces, the address on `nodeAddr`'s subnet; loopback when it is one of ours. */
export function hostAddressFor(
  nodeAddr: string,
  interfaces: Array<os.NetworkInterfaceInfo | undefined>,
): string | null {
  const mine = interfaces.filter((i): i is os.NetworkInterfaceInfo => i !== undefined && i.family === "IPv4");
  if (mine.some((i) => i.address === nodeAddr)) return "127.0.0.1";
  return mine.find((i) => !i.internal && sameSubnet(i.address, nodeAddr, i.netmask))?.address ?? null;
}
