#!/usr/bin/env bash
# A local SLURM cluster on this one machine, for `--executor slurm` and its tests: one slurmctld on
# the host and three slurmd, each in a network namespace and a mount namespace of its own, so a node
# really is apart: it reaches the host only at a routable address on a private bridge (never the
# host's 127.0.0.1, which in its namespace is its own loopback), and it sees only the folders it is
# given (/work, /tmp, /root and /home are covered with empty tmpfs; the shared jobs root and the
# project are bound back).
#
#   n1, n2  partition "main" (default): see the shared root and the project
#   n3      partition "blind": sees the project but NOT the shared root (the refusal test)
#
# Idempotent: a second run with the cluster up only checks it. `--down` stops the cluster and removes
# the namespaces and the bridge. Settings that were checked to work: shared/MACHINE-NOTES.md §SLURM.
# Run as root. Prints the seconds setup took after the packages were there.
set -euo pipefail

SHARED_ROOT=${BENCHFLOW_SLURM_SHARED_ROOT:-/var/lib/benchflow-slurm/shared}
PROJECT=${BENCHFLOW_SLURM_PROJECT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
HIDE=${BENCHFLOW_SLURM_HIDE:-/work:/tmp:/root:/home}
BRIDGE=bfslurm0
SUBNET=10.77.0
HOST_ADDR=$SUBNET.1
# More CPUs than the machine has (config_overrides): the tests' trials mostly sleep, and a group of 8
# should fit at once on two nodes.
NODE_CPUS=${BENCHFLOW_SLURM_NODE_CPUS:-4}
NODE_MEM_MB=${BENCHFLOW_SLURM_NODE_MEM_MB:-8192}
CONF=/etc/slurm/slurm.conf
NODES=(n1 n2 n3)

log() { echo "setup-slurm: $*"; }
die() {
  echo "setup-slurm: ERROR: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (it installs packages, writes $CONF and starts daemons): sudo $0"
export PATH="$PATH:/usr/sbin:/sbin"

node_index() { echo "${1#n}"; }
node_addr() { echo "$SUBNET.$((10 + $(node_index "$1")))"; }
node_port() { echo "$((17000 + $(node_index "$1")))"; }

# Alive only if the pid is still a SLURM daemon: a machine whose processes were stopped without a
# shutdown keeps /run, and its pids are reused by other programs.
pid_alive() {
  [ -f "$1" ] || return 1
  case "$(cat "/proc/$(cat "$1" 2>/dev/null)/comm" 2>/dev/null)" in slurm*) return 0 ;; *) return 1 ;; esac
}

stop_pidfile() {
  local f=$1
  if pid_alive "$f"; then
    local pid
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

teardown() {
  for n in "${NODES[@]}"; do
    stop_pidfile "/run/slurmd-$n.pid"
    ip netns del "bf-$n" 2>/dev/null || true
    ip link del "bf-$n-h" 2>/dev/null || true
  done
  stop_pidfile /run/slurmctld.pid
  ip link del "$BRIDGE" 2>/dev/null || true
}

if [ "${1:-}" = "--down" ]; then
  teardown
  log "cluster stopped; namespaces and bridge removed (munged left running)"
  exit 0
fi

# 1. Packages.
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "missing slurmctld/munged and no apt-get here; install slurm-wlm and munge"
  log "installing slurm-wlm munge (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 || {
    apt-get update -q >/dev/null || die "apt-get update failed; check that Debian's archive is reachable"
    apt-get install -y -q slurm-wlm munge >/dev/null || die "apt-get install slurm-wlm munge failed"
  }
fi
started=$(date +%s.%N)

# 2. Munge: one key, one daemon on the host; the nodes reach its unix socket through the filesystem.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey -c -k /etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  su -s /bin/sh munge -c munged
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null || die "munged did not start (see /var/log/munge/munged.log)"
fi

# 3. The configuration. The controller is named by its address on the bridge, so srun and sbatch on
# the host speak from an address the nodes can answer.
host=$(hostname)
want=$(
  cat <<EOF
# written by benchflow scripts/setup-slurm.sh
ClusterName=local
SlurmctldHost=$host($HOST_ADDR)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
SlurmdSpoolDir=/var/spool/slurmd/%n
StateSaveLocation=/var/spool/slurmctld
SlurmUser=root
AuthType=auth/munge
SchedulerType=sched/backfill
# Batch jobs scheduled at submit, not deferred (default batch_sched_delay=3 s): one trial per job.
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
JobAcctGatherType=jobacct_gather/none
SlurmdParameters=config_overrides
SlurmdTimeout=15
InactiveLimit=0
KillWait=5
MinJobAge=60
EOF
  for n in "${NODES[@]}"; do
    echo "NodeName=$n NodeHostname=$host NodeAddr=$(node_addr "$n") Port=$(node_port "$n") CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB State=UNKNOWN"
  done
  echo "PartitionName=main Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP"
  echo "PartitionName=blind Nodes=n3 Default=NO MaxTime=INFINITE State=UP"
)
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm "$SHARED_ROOT"
if [ "$(cat "$CONF" 2>/dev/null)" != "$want" ]; then
  log "writing $CONF (restarting the cluster)"
  teardown
  printf '%s\n' "$want" >"$CONF"
fi

# 4. The bridge the nodes reach the host on.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link add "$BRIDGE" type bridge
  ip addr add "$HOST_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
fi

# 5. The controller.
if ! pid_alive /run/slurmctld.pid; then
  slurmctld
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
  scontrol ping >/dev/null 2>&1 || die "slurmctld did not answer (see /var/log/slurm/slurmctld.log)"
fi

# 6. The nodes: a network namespace with one veth to the bridge, then a mount namespace in which the
# hidden roots are empty and only the given folders are bound back.
shares_of() {
  local project_modules
  project_modules=$(readlink -f "$PROJECT/node_modules" 2>/dev/null || true)
  echo "$PROJECT"
  [ -n "$project_modules" ] && [ "$project_modules" != "$PROJECT/node_modules" ] && echo "$project_modules"
  [ "$1" != n3 ] && echo "$SHARED_ROOT"
  return 0
}

# The blind node gets an empty tmpfs over the shared root as well.
hidden_of() {
  if [ "$1" = n3 ]; then echo "$HIDE:$SHARED_ROOT"; else echo "$HIDE"; fi
}

start_node() {
  local n=$1 ns="bf-$n" addr
  addr=$(node_addr "$n")
  if ! ip netns list | grep -qx "$ns\( .*\)\?"; then
    ip netns add "$ns"
    ip link add "$ns-h" type veth peer name "$ns-c"
    ip link set "$ns-c" netns "$ns"
    ip link set "$ns-h" master "$BRIDGE" up
    ip netns exec "$ns" ip addr add "$addr/24" dev "$ns-c"
    ip netns exec "$ns" ip link set "$ns-c" up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip route add default via "$HOST_ADDR"
  fi
  local shares
  shares=$(shares_of "$n" | paste -sd: -)
  # In the node's mount namespace: stage the given folders, cover the hidden roots, move them back.
  # nsenter, not `ip netns exec`: the latter remounts /sys, which hides the cgroup tree slurmd reads.
  nsenter --net="/run/netns/$ns" unshare --mount --propagation private /bin/bash -euc '
    IFS=: read -ra shares <<<"$1"; IFS=: read -ra hide <<<"$2"; node=$3
    stage=$(mktemp -d /run/bf-stage-XXXXXX)
    i=0
    for s in "${shares[@]}"; do mkdir -p "$stage/$i"; mount --rbind "$s" "$stage/$i"; i=$((i + 1)); done
    for h in "${hide[@]}"; do [ -d "$h" ] && mount -t tmpfs -o mode=1777 "bf-$node-hidden" "$h"; done
    i=0
    for s in "${shares[@]}"; do mkdir -p "$s"; mount --move "$stage/$i" "$s"; i=$((i + 1)); done
    rmdir "$stage"/* "$stage"
    exec slurmd -N "$node"
  ' bash "$shares" "$(hidden_of "$n")" "$n"
}

# A node already up keeps its mounts; one started with other folders (another checkout, another
# shared root) is restarted with these.
mkdir -p /run/benchflow-slurm
for n in "${NODES[@]}"; do
  given="$(shares_of "$n" | paste -sd: -) hide=$(hidden_of "$n")"
  if pid_alive "/run/slurmd-$n.pid" && [ "$(cat "/run/benchflow-slurm/$n.mounts" 2>/dev/null)" != "$given" ]; then
    log "$n was started with other folders; restarting it"
    stop_pidfile "/run/slurmd-$n.pid"
  fi
  pid_alive "/run/slurmd-$n.pid" || start_node "$n"
  printf '%s\n' "$given" >"/run/benchflow-slurm/$n.mounts"
done

# 7. Check: every node idle, a job runs on n2 and sees the shared root; n3 does not.
cd / # the nodes do not see most of this host's folders; srun starts in its cwd
for _ in $(seq 150); do
  idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" || $2 == "comp" || $2 == "mix" || $2 == "alloc"' | wc -l)
  [ "$idle" -ge "${#NODES[@]}" ] && break
  sleep 0.2
done
[ "$idle" -ge "${#NODES[@]}" ] || {
  sinfo -N >&2 || true
  die "not every node came up (see /var/log/slurm/slurmd-*.log)"
}
scontrol update nodename=n1,n2,n3 state=resume >/dev/null 2>&1 || true
got=$(timeout 30 srun -w n2 -t 1 printenv SLURMD_NODENAME) || die "srun -w n2 failed"
[ "$got" = n2 ] || die "srun -w n2 ran on '$got'"
marker="$SHARED_ROOT/.setup-slurm-marker"
date +%s.%N >"$marker"
timeout 30 srun -w n2 -t 1 test -f "$marker" || die "n2 cannot see $SHARED_ROOT"
if timeout 30 srun -p blind -w n3 -t 1 test -f "$marker" 2>/dev/null; then die "n3 sees $SHARED_ROOT; it must not"; fi
if timeout 30 srun -w n1 -t 1 bash -c 'exec 3<>/dev/tcp/127.0.0.1/6817' 2>/dev/null; then
  die "n1 reaches the host's loopback; it must not"
fi

ended=$(date +%s.%N)
log "up: $(sinfo -h -N -o '%N/%P/%t' | paste -sd' ' -); shared root $SHARED_ROOT; host at $HOST_ADDR"
log "setup took $(awk "BEGIN { printf \"%.1f\", $ended - $started }") s after the packages"
