// One exec, described independently of the tool that carries it out (bwrap or unshare).
import type { SystemEntry } from "./host.js";

export type NamespaceTool = "bwrap" | "unshare";

/** How users map onto the host; fixed per process (see probe.ts). */
export interface Identity {
  /** We run as host root: no user namespace, the root user inside is real root with fewer capabilities. */
  hostRoot: boolean;
  /** Host root only: the uid/gid the agent is switched to (via setpriv); null runs the agent as root. */
  agent: { uid: number; gid: number } | null;
  /** Absolute path of setpriv, when present. */
  setpriv: string | null;
  /** Absolute path of util-linux unshare: a root agent's own user namespace (host root). */
  unshare: string | null;
  /** Not host root: our uid/gid, which the agent keeps inside the sandbox. */
  hostUid: number;
  hostGid: number;
}

export interface ExecPlan {
  /** Host folder that becomes "/" inside (the sandbox's writable tree). */
  fsRoot: string;
  /** System folders bound read-only at their own path (symlinked ones are already in fsRoot). */
  system: SystemEntry[];
  /** Single files bound read-only over a path inside a system folder (e.g. /etc/passwd). */
  fileOverrides: { host: string; sandbox: string }[];
  /** Paths inside system folders covered with an empty read-only tmpfs (task folder, jobs folder). */
  hidden: string[];
  network: boolean;
  cwd: string;
  user: "agent" | "root";
  /**
   * Host root, user "agent": the task asked for a root agent, so after the switch to the agent's
   * uid it enters a user namespace of its own as uid 0 (mapped to that uid: no power over the
   * host's files, the verifier's or the system's).
   */
  agentUserns?: boolean;
  env: Record<string, string>;
  command: string;
}

export const BASH = "/bin/bash";
export const ENV = "/usr/bin/env";
export const HOSTNAME = "benchflow";

/** What "root" keeps as host root: roughly Docker's default set, minus MKNOD (no device cgroup here). */
export const ROOT_CAPS = [
  "chown",
  "dac_override",
  "fowner",
  "fsetid",
  "kill",
  "setgid",
  "setuid",
  "setpcap",
  "net_bind_service",
  "net_raw",
  "sys_chroot",
  "audit_write",
  "setfcap",
];

/** setpriv arguments that switch host root to the agent user for good. */
export function setprivToAgent(setpriv: string, agent: { uid: number; gid: number }): string[] {
  return [
    setpriv,
    `--reuid=${agent.uid}`,
    `--regid=${agent.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
  ];
}

/** setpriv arguments that keep root but only with ROOT_CAPS (so it cannot remount /usr read-write). */
export function setprivRootCaps(setpriv: string): string[] {
  return [setpriv, "--inh-caps=-all", `--bounding-set=-all,${ROOT_CAPS.map((c) => `+${c}`).join(",")}`];
}

/** After setprivToAgent: uid 0 in a user namespace of the agent's own, when the task asks for root. */
export function agentUsernsPrefix(plan: ExecPlan, identity: Identity): string[] {
  if (!plan.agentUserns || identity.unshare === null) return [];
  return [identity.unshare, "--user", "--map-root-user", "--"];
}

export function agentSwitched(
  plan: ExecPlan,
  identity: Identity,
): identity is Identity & {
  agent: { uid: number; gid: number };
  setpriv: string;
} {
  return plan.user === "agent" && identity.hostRoot && identity.agent !== null && identity.setpriv !== null;
}
