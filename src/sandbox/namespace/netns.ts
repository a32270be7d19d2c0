// Network on, in the namespace sandbox: a network namespace of the sandbox's own, not the host's.
// A holder process (`unshare --net sleep infinity`) keeps the namespace alive between execs and
// slirp4netns gives it outbound NAT with the host's loopback cut off (--disable-host-loopback), so
// the agent reaches the outside but not the policy endpoint or any other server on the host's
// 127.0.0.1; the gateway comes through the socket relay like with no network. Each exec joins the
// namespace with nsenter. Both processes die with us (setpriv --pdeathsig, slirp4netns --exit-fd).
// Without root the holder also owns a user namespace, which each exec enters first.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { opt } from "../../options.js";
import { applyHostBlock, hostBlockRecordOf, planHostBlock, SLIRP_HOST } from "../host-block.js";
import { ensureHostGuard, SLIRP_UID } from "../host-guard.js";
import { type HostBlockRecord, type PolicyEndpoint, SandboxSetupError } from "../types.js";
import { findExecutable, SANDBOX_PATH } from "./host.js";

/** setpriv's arguments for slirp4netns as SLIRP_UID: the two capabilities it needs, nothing else of root's. */
const SLIRP_AS_GUARDED = [
  `--reuid=${SLIRP_UID}`,
  `--regid=${SLIRP_UID}`,
  "--clear-groups",
  "--inh-caps=-all,+sys_admin,+net_admin",
  "--ambient-caps=+sys_admin,+net_admin",
];

export interface SandboxNetwork {
  /** Put in front of a tool's argv: the exec then runs inside the sandbox's network namespace. */
  readonly joinPrefix: string[];
  /** The holder's host pid: its /proc/<pid>/ns/net is the namespace (the trusted relay enters it). */
  readonly holderPid: number;
  /** The host's addresses and the policy endpoint, closed before the first exec (host-block.ts). */
  readonly hostBlock: HostBlockRecord;
  close(): Promise<void>;
}

/** The fix when the namespace sandbox cannot give a task network: made when said, so it names the option as the caller does. */
export function networkFix(): string {
  return `install slirp4netns (apt-get install slirp4netns), or use ${opt("sandbox", "container")}, or give the task network_mode = "no-network"`;
}

/** Why network-on sandboxes cannot be made here, or null. */
export async function networkUnavailableReason(): Promise<string | null> {
  const missing = [];
  for (const tool of ["slirp4netns", "unshare", "nsenter"])
    if ((await findExecutable(tool)) === null) missing.push(tool);
  return missing.length === 0 ? null : `${missing.join(", ")} not found on ${SANDBOX_PATH}`;
}

/** What a held loopback-only namespace needs on the host (root only), or null when it is all there. */
export async function loopbackUnavailableReason(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "a held network namespace for the gateway relay needs root";
  const missing = [];
  for (const tool of ["unshare", "nsenter", "ip"])
    if ((await findExecutable(tool)) === null) missing.push(tool);
  return missing.length === 0 ? null : `${missing.join(", ")} not found on ${SANDBOX_PATH}`;
}

/**
 * No network, held: a namespace with only loopback, kept by a holder like the one with network, so
 * that the trusted gateway relay can listen in it from the host (relay.ts) before the agent starts.
 * Host root only: the relay enters the namespace as root.
 */
export async function startLoopbackNetwork(policyEndpoint?: PolicyEndpoint): Promise<SandboxNetwork> {
  const [unshare, nsenter, ip, setpriv] = await Promise.all([
    findExecutable("unshare"),
    findExecutable("nsenter"),
    findExecutable("ip"),
    findExecutable("setpriv"),
  ]);
  if (unshare === null || nsenter === null || ip === null)
    throw new SandboxSetupError(
      `the namespace sandbox cannot hold a network namespace: ${await loopbackUnavailableReason()}`,
    );
  const argv = [
    ...(setpriv ? [setpriv, "--pdeathsig", "SIGKILL"] : []),
    unshare,
    "--net",
    "--",
    "/bin/sh",
    "-c",
    `${ip} link set lo up && echo ready && exec sleep infinity`,
  ];
  const [file, ...args] = argv as [string, ...string[]];
  const holder = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env: { PATH: SANDBOX_PATH } });
  const close = async () => {
    if (holder.exitCode !== null || holder.signalCode !== null) return;
    holder.ref();
    const gone = new Promise((r) => holder.once("exit", r));
    holder.kill("SIGKILL");
    await gone;
  };
  try {
    await firstOutput(holder, "the loopback namespace holder");
  } catch (err) {
    await close();
    throw new SandboxSetupError(
      `the namespace sandbox could not hold a network namespace: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  holder.unref();
  for (const stream of holder.stdio) (stream as { unref?: () => void } | null)?.unref?.();
  const pid = holder.pid as number;
  return {
    joinPrefix: [nsenter, `--net=/proc/${pid}/ns/net`],
    holderPid: pid,
    hostBlock: hostBlockRecordOf(policyEndpoint, "no_network"),
    close,
  };
}

export async function startSandboxNetwork(
  hostRoot: boolean,
  policyEndpoint?: PolicyEndpoint,
): Promise<SandboxNetwork> {
  const [slirp, unshare, nsenter, setpriv] = await Promise.all([
    findExecutable("slirp4netns"),
    findExecutable("unshare"),
    findExecutable("nsenter"),
    findExecutable("setpriv"),
  ]);
  if (slirp === null || unshare === null || nsenter === null) {
    throw new SandboxSetupError(
      `the task has network, which the namespace sandbox gives through its own network namespace, but ${await networkUnavailableReason()}: ${networkFix()}`,
    );
  }
  const env = { PATH: SANDBOX_PATH };
  const holderArgv = [
    ...(setpriv ? [setpriv, "--pdeathsig", "SIGKILL"] : []),
    unshare,
    ...(hostRoot ? [] : ["--user", "--map-root-user"]),
    "--net",
    "--",
    "/bin/sh",
    "-c",
    "echo ready; exec sleep infinity",
  ];
  const [holderFile, ...holderArgs] = holderArgv as [string, ...string[]];
  const holder = spawn(holderFile, holderArgs, { stdio: ["ignore", "pipe", "pipe"], env });
  let slirpChild: ChildProcess | null = null;
  const close = async () => {
    for (const child of [slirpChild, holder]) {
      if (child === null || child.exitCode !== null || child.signalCode !== null) continue;
      child.ref(); // unref'd while idle; the exit must keep the loop alive to be seen.
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await gone;
    }
  };
  try {
    await firstOutput(holder, "the network namespace holder");
    const pid = holder.pid as number;
    const ns = (kind: string) => `/proc/${pid}/ns/${kind}`;
    // The host's guard closes every host address to slirp's sockets, later ones included, when
    // slirp runs as its own uid (host-guard.ts); it then gets the namespace as an open file (fd 5),
    // since that uid may not open a root process's namespace itself.
    const guardWhy = !hostRoot
      ? "the host's firewall needs root"
      : setpriv === null
        ? "setpriv is missing (util-linux)"
        : await ensureHostGuard();
    const asGuarded = guardWhy === null && setpriv !== null;
    const nsFd = asGuarded ? openSync(ns("net"), "r") : null;
    // fd 3: slirp4netns writes "1" once tap0 is configured; fd 4: it exits when our end closes.
    const slirpArgv = [
      ...(asGuarded ? [setpriv as string, ...SLIRP_AS_GUARDED, "--"] : []),
      slirp,
      "--configure",
      "--mtu=65520",
      "--disable-host-loopback",
      "--ready-fd=3",
      "--exit-fd=4",
      ...(hostRoot ? [] : [`--userns-path=${ns("user")}`]),
      ...(nsFd === null ? [String(pid)] : ["--netns-type=path", "/proc/self/fd/5"]),
      "tap0",
    ];
    const [slirpFile, ...slirpArgs] = slirpArgv as [string, ...string[]];
    const slirpProc: ChildProcess = spawn(slirpFile, slirpArgs, {
      stdio: ["ignore", "ignore", "pipe", "pipe", "pipe", ...(nsFd === null ? [] : [nsFd])],
      env,
    });
    if (nsFd !== null) closeSync(nsFd);
    slirpChild = slirpProc;
    (slirpProc.stdio[4] as Writable).on("error", () => {});
    await firstOutput(slirpProc, "slirp4netns", slirpProc.stdio[3] as Readable);
    const joinPrefix = hostRoot
      ? [nsenter, `--net=${ns("net")}`]
      : [nsenter, "--preserve-credentials", `--user=${ns("user")}`, `--net=${ns("net")}`];
    const block = await planHostBlock(policyEndpoint, { devices: ["tap0"], extra: [SLIRP_HOST] });
    const hostBlock = {
      ...(await applyHostBlock(joinPrefix, block)),
      guard: guardWhy ? `not_applied: ${guardWhy}` : "nft",
    };
    // Neither process may keep a finished run alive; they die with it anyway.
    for (const child of [holder, slirpProc]) {
      child.unref();
      for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    }
    return { joinPrefix, holderPid: pid, hostBlock, close };
  } catch (err) {
    await close();
    throw new SandboxSetupError(
      `the namespace sandbox could not give the task its own network: ${(err as Error).message}. Fix: use ${opt("sandbox", "container")}${hostRoot ? "" : ", or run as root (or let your user open /dev/net/tun)"}, or give the task network_mode = "no-network"`,
      { cause: err },
    );
  }
}

/** Resolves on the first bytes of `ready` (default stdout); rejects if the process ends first. */
function firstOutput(child: ChildProcess, what: string, ready?: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr?.on("data", (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-500);
    });
    const onExit = (code: number | null) =>
      reject(new Error(`${what} exited (${code ?? "killed"}): ${stderr.trim() || "no message"}`));
    child.once("error", reject);
    child.once("exit", onExit);
    (ready ?? child.stdout)?.once("data", () => {
      child.off("exit", onExit);
      resolve();
    });
  });
}
