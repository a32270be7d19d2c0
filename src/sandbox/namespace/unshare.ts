// The util-linux `unshare` fallback: new mount/pid/uts/ipc (and net) namespaces, then a small bash
// script binds the same tree bwrap would (system folders read-only, fresh /proc, minimal /dev),
// pivots into it and detaches the host's root, so host folders are unreachable exactly as with bwrap.
// Differences from bwrap, by necessity: the command runs as pid 1 of its namespace (no separate
// reaper), and each exec spawns ~15 short `mount` processes, so bwrap is the fast path. util-linux
// 2.38 does not make submounts read-only with `--rbind -o ro`; the script remounts each one itself
// (mountinfo escapes odd characters such as spaces, so a submount named with one would stay writable).
import {
  agentSwitched,
  agentUsernsPrefix,
  BASH,
  type ExecPlan,
  HOSTNAME,
  type Identity,
  setprivRootCaps,
  setprivToAgent,
} from "./plan.js";
import type { Invocation } from "./run.js";

/** Device nodes bound from the host into the skeleton /dev (mountpoints made by scratch.ts). */
export const DEV_NODES = ["null", "zero", "full", "random", "urandom", "tty"];

const SETUP = `set -e
{ IFS= read -r -d '' cmd; mapfile -d '' -t envs; } <&3
exec 3<&-
# Descriptors the host process inherited (beyond stdio) must not reach the sandbox.
for f in /proc/self/fd/*; do f=\${f##*/}; if ((f > 2)); then eval "exec $f>&-" 2>/dev/null || true; fi; done
fs=$1 cwd=$2 ip=$3; shift 3
mount --bind "$fs" "$fs"
dirs=(); n=$1; shift
while ((n-- > 0)); do dirs+=("$1"); mount --rbind -o ro "$1" "$fs$1"; shift; done
subs=()
while read -r _ _ _ _ mnt _; do
  for d in "\${dirs[@]}"; do case $mnt in "$fs$d"/*) subs+=("$mnt");; esac; done
done </proc/self/mountinfo
for m in "\${subs[@]}"; do mount -o remount,bind,ro "$m"; done
n=$1; shift
while ((n-- > 0)); do mount --bind -o ro "$1" "$fs$2"; shift 2; done
n=$1; shift
while ((n-- > 0)); do mount -t tmpfs -o ro,mode=755 hidden "$fs$1"; shift; done
mount -t proc proc "$fs/proc"
for d in ${DEV_NODES.join(" ")}; do mount --bind "/dev/$d" "$fs/dev/$d"; done
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$fs/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$fs/dev/pts" 2>/dev/null || true
if [[ -n $ip ]]; then "$ip" link set lo up; fi
{ echo ${HOSTNAME} >/proc/sys/kernel/hostname || hostname ${HOSTNAME} || true; } 2>/dev/null
cd "$fs"
pivot_root . .
umount -l .
cd "$cwd"
exec /usr/bin/env -i "\${envs[@]}" "$@" ${BASH} -c "$cmd"
`;

export interface UnshareTools {
  unshare: string;
  /** iproute2's ip, to bring loopback up in a new network namespace; null leaves it down. */
  ip: string | null;
}

/** The command and its environment go through fd 3; argv carries only mounts and the user switch. */
export function unshareInvocation(tools: UnshareTools, plan: ExecPlan, identity: Identity): Invocation {
  const argv = [tools.unshare, "--mount", "--pid", "--fork", "--kill-child", "--uts", "--ipc"];
  if (!plan.network) argv.push("--net");
  if (!identity.hostRoot) argv.push("--map-root-user");
  argv.push("--propagation", "private", "--", BASH, "-c", SETUP, "bf-setup");
  argv.push(plan.fsRoot, plan.cwd, plan.network ? "" : (tools.ip ?? ""));
  const dirs = plan.system.filter((e) => e.symlinkTarget === null).map((e) => e.path);
  argv.push(String(dirs.length), ...dirs);
  argv.push(String(plan.fileOverrides.length), ...plan.fileOverrides.flatMap((f) => [f.host, f.sandbox]));
  argv.push(String(plan.hidden.length), ...plan.hidden);
  argv.push(...finalUser(tools, plan, identity));
  const env = Object.entries(plan.env).map(([k, v]) => `${k}=${v}\0`);
  return { argv, input: `${plan.command}\0${env.join("")}`, infoFd: false };
}

function finalUser(tools: UnshareTools, plan: ExecPlan, identity: Identity): string[] {
  if (agentSwitched(plan, identity))
    return [
      ...setprivToAgent(identity.setpriv, identity.agent),
      "--no-new-privs",
      ...agentUsernsPrefix(plan, identity),
    ];
  if (!identity.hostRoot && plan.user === "agent") {
    // A nested user namespace shows the agent as our own uid instead of the mapped root.
    return [tools.unshare, "--user", `--map-user=${identity.hostUid}`, `--map-group=${identity.hostGid}`];
  }
  return identity.setpriv === null ? [] : [...setprivRootCaps(identity.setpriv), "--no-new-privs"];
}
