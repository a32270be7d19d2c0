// Finds a working tool once per process: looks the programs up, then really runs `true` in a
// throwaway sandbox as root and as the agent, so unavailableReason() reports what would fail.

import { opt } from "../../options.js";
import { bwrapInvocation } from "./bwrap.js";
import {
  AGENT_GID,
  AGENT_UID,
  findExecutable,
  hostIsRoot,
  SANDBOX_PATH,
  type SystemEntry,
  systemEntriesOf,
} from "./host.js";
import type { ExecPlan, Identity, NamespaceTool } from "./plan.js";
import { type Invocation, runContained } from "./run.js";
import { makeScratchRoot, makeSkeleton, removeTree, type ScratchRoot, scratchParent } from "./scratch.js";
import { type UnshareTools, unshareInvocation } from "./unshare.js";

export type ToolChoice = NamespaceTool | "auto";

export interface ToolSetup {
  tool: NamespaceTool;
  identity: Identity;
  invocationFor(plan: ExecPlan): Invocation;
  /** Limits of this machine every sandbox reports (agent runs as root, loopback down, ...). */
  warnings: string[];
}

export type ToolProbe = { setup: ToolSetup; reason: null } | { setup: null; reason: string };

const probes = new Map<string, Promise<ToolProbe>>();

export function probeTool(choice: ToolChoice, scratchDir?: string): Promise<ToolProbe> {
  const key = `${choice}\0${scratchDir ?? ""}`;
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = choice === "auto" ? probeAuto(scratchDir) : probeOne(choice, scratchDir);
    probes.set(key, probe);
  }
  return probe;
}

async function probeAuto(scratchDir?: string): Promise<ToolProbe> {
  const bwrap = await probeTool("bwrap", scratchDir);
  if (bwrap.setup) return bwrap;
  const unshare = await probeTool("unshare", scratchDir);
  if (unshare.setup) return unshare;
  return {
    setup: null,
    reason: `no namespace tool works here. bwrap: ${bwrap.reason} unshare: ${unshare.reason}`,
  };
}

async function probeOne(tool: NamespaceTool, scratchDir?: string): Promise<ToolProbe> {
  const fail = (reason: string): ToolProbe => ({ setup: null, reason });
  const [main, setpriv, ip, pivot, unshare] = await Promise.all([
    findExecutable(tool),
    findExecutable("setpriv"),
    findExecutable("ip"),
    findExecutable("pivot_root"),
    findExecutable("unshare"),
  ]);
  if (main === null) {
    return fail(
      `${tool} not found on ${SANDBOX_PATH}: install it (apt-get install ${tool === "bwrap" ? "bubblewrap" : "util-linux"})`,
    );
  }
  const hostRoot = hostIsRoot();
  if (tool === "unshare" && pivot === null) return fail("pivot_root not found: apt-get install util-linux");
  if (tool === "unshare" && hostRoot && setpriv === null) {
    return fail(
      "setpriv not found; as root the unshare fallback needs it to drop privileges: apt-get install util-linux",
    );
  }
  const identity: Identity = {
    hostRoot,
    agent: hostRoot && setpriv !== null ? { uid: AGENT_UID, gid: AGENT_GID } : null,
    setpriv,
    unshare,
    hostUid: process.getuid?.() ?? 0,
    hostGid: process.getgid?.() ?? 0,
  };
  const tools: UnshareTools = { unshare: main, ip };
  const invocationFor = (plan: ExecPlan) =>
    tool === "bwrap" ? bwrapInvocation(main, plan, identity) : unshareInvocation(tools, plan, identity);
  const warnings: string[] = [];
  if (hostRoot && setpriv === null) {
    warnings.push("setpriv not found, so the agent runs as root in the sandbox (apt-get install util-linux)");
  }
  if (tool === "unshare" && ip === null) {
    warnings.push("ip (iproute2) not found: without network, loopback stays down in the unshare sandbox");
  }

  let system: SystemEntry[];
  let scratch: ScratchRoot;
  try {
    system = await systemEntriesOf();
    scratch = await makeScratchRoot(await scratchParent(scratchDir), `probe-${tool}`);
  } catch (err) {
    return fail(`cannot prepare a scratch folder: ${(err as Error).message}`);
  }
  try {
    await makeSkeleton(scratch.fsRoot, system, tool);
    const plan = (user: "agent" | "root"): ExecPlan => ({
      fsRoot: scratch.fsRoot,
      system,
      fileOverrides: [],
      hidden: [],
      network: false,
      cwd: "/",
      user,
      env: { PATH: SANDBOX_PATH },
      command: "test -d /proc/self && test ! -e /root/.probe-absent",
    });
    const run = (user: "agent" | "root") =>
      runContained(invocationFor(plan(user)), { env: { PATH: SANDBOX_PATH }, timeoutSec: 20 });
    const [asRoot, asAgent] = await Promise.all([
      run("root"),
      identity.agent ? run("agent") : Promise.resolve(null),
    ]);
    if (asRoot.exitCode !== 0) {
      return fail(
        `${tool} cannot create the sandbox's namespaces here (exit ${asRoot.exitCode}: ${asRoot.stderr.trim().slice(-300)}). ${fixHint(tool)}`,
      );
    }
    if (asAgent !== null && asAgent.exitCode !== 0) {
      identity.agent = null;
      warnings.push(
        `cannot switch the agent to uid ${AGENT_UID} (${asAgent.stderr.trim().slice(-200)}), so it runs as root in the sandbox`,
      );
    }
    return { setup: { tool, identity, invocationFor, warnings }, reason: null };
  } catch (err) {
    return fail(`${tool} could not be started: ${(err as Error).message}. ${fixHint(tool)}`);
  } finally {
    await removeTree(scratch.dir);
  }
}

function fixHint(tool: NamespaceTool): string {
  const userns = hostIsRoot()
    ? ""
    : " Unprivileged user namespaces must be enabled (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0).";
  const other =
    tool === "bwrap" ? "the unshare tool (util-linux)" : "bubblewrap (apt-get install bubblewrap)";
  return `Fix: try ${other}, or use ${opt("sandbox", "container")}.${userns}`;
}
