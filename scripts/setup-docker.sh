#!/usr/bin/env bash
# Make this machine able to run the container tests on Docker too: Debian's Docker Engine (20.10,
# API 1.41) on its own socket, unix:///run/docker.sock, so it never collides with Podman's, with
# NAT for bridge networks (--iptables=true), and the base image brought over from Podman (no
# registry needed). Run it after scripts/setup-podman.sh. Idempotent: a second run only checks.
# No systemd here, so the daemon is started in the background. Settings: shared/MACHINE-NOTES.md.
set -euo pipefail

SOCKET_PATH=${BENCHFLOW_DOCKER_SOCKET:-/run/docker.sock}
BASE_IMAGE=${BENCHFLOW_BASE_IMAGE:-docker.io/library/debian:bookworm-slim}
DAEMON_LOG=${BENCHFLOW_DOCKERD_LOG:-/var/log/benchflow-dockerd.log}

log() { echo "setup-docker: $*"; }
die() {
  echo "setup-docker: ERROR: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts dockerd): sudo $0"
export PATH="$PATH:/usr/sbin:/sbin"

# 1. Packages: docker.io brings dockerd, containerd, runc and the docker CLI.
if ! command -v dockerd >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "no dockerd and no apt-get here; install Docker Engine with your package manager"
  log "installing docker.io (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -q docker.io >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q docker.io >/dev/null; }; } ||
    die "apt-get install docker.io failed; check that Debian's archive is reachable"
fi
command -v curl >/dev/null 2>&1 || die "curl is missing (scripts/setup-podman.sh installs it)"

# 2. The daemon.
# Remove a pid file whose process is gone or is now another program (pids are reused).
clear_stale_pidfile() {
  local file=$1 program=$2 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file" 2>/dev/null || true)
  if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$program" ]; then return 0; fi
  log "removing stale $file (no $program runs as pid ${pid:-?})"
  rm -f "$file"
}
ping_socket() { curl -fsS --max-time 2 --unix-socket "$SOCKET_PATH" http://d/_ping >/dev/null 2>&1; }
if ping_socket; then
  log "Docker already answering on $SOCKET_PATH"
else
  rm -f "$SOCKET_PATH"
  # A machine whose processes were stopped without a shutdown (a session's end, a killed CI run) keeps
  # /run: dockerd refuses to start over its own stale pid file, and so would its containerd.
  clear_stale_pidfile /run/docker.pid dockerd
  clear_stale_pidfile /run/docker/containerd/containerd.pid containerd
  log "starting dockerd on unix://$SOCKET_PATH (log: $DAEMON_LOG)"
  # From /: the daemon outlives the folder this script ran in.
  setsid nohup env -C / dockerd --host "unix://$SOCKET_PATH" --data-root /var/lib/docker --exec-root /run/docker \
    --pidfile /run/docker.pid --iptables=true >>"$DAEMON_LOG" 2>&1 </dev/null &
  for _ in $(seq 1 120); do
    ping_socket && break
    sleep 0.5
  done
  if ! ping_socket; then
    echo "setup-docker: the last lines of $DAEMON_LOG:" >&2
    tail -n 25 "$DAEMON_LOG" >&2 || true
    die "dockerd did not answer on $SOCKET_PATH within 60 s; see $DAEMON_LOG"
  fi
  log "Docker answering on $SOCKET_PATH"
fi
docker_cli() { DOCKER_HOST="unix://$SOCKET_PATH" docker "$@"; }

# 3. The base image, from Podman's store (scripts/setup-podman.sh makes it from Debian's archive).
if docker_cli image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  log "base image $BASE_IMAGE present"
else
  command -v podman >/dev/null 2>&1 && podman image exists "$BASE_IMAGE" ||
    die "$BASE_IMAGE is in neither engine; run scripts/setup-podman.sh first"
  log "bringing $BASE_IMAGE over from Podman (podman save | docker load)"
  podman save "$BASE_IMAGE" | docker_cli load >/dev/null || die "podman save $BASE_IMAGE | docker load failed"
  docker_cli image inspect "$BASE_IMAGE" >/dev/null 2>&1 ||
    docker_cli tag "$(podman image inspect --format '{{.Id}}' "$BASE_IMAGE")" "$BASE_IMAGE" ||
    die "$BASE_IMAGE was loaded but is not tagged in Docker"
fi

# 4. Podman beside Docker. dockerd sets the FORWARD policy to DROP when it turns on IP forwarding, and
# with br_netfilter (bridge-nf-call-iptables=1) traffic between two containers on one bridge goes
# through FORWARD too. Netavark accepts it for Podman's ordinary networks, not for internal ones, so a
# compose trial without network (an internal network) could not reach its own sidecars. Accept what
# stays on one Podman bridge (bridged, not routed: another network and the outside stay closed).
if command -v iptables >/dev/null 2>&1 && iptables -S DOCKER-USER >/dev/null 2>&1; then
  rule=(-i podman+ -m physdev --physdev-is-bridged -j ACCEPT)
  if ! iptables -C DOCKER-USER "${rule[@]}" 2>/dev/null; then
    iptables -I DOCKER-USER "${rule[@]}" || die "could not let traffic within a Podman bridge through Docker's FORWARD DROP"
    log "let traffic within one Podman bridge through Docker's FORWARD policy (DOCKER-USER)"
  fi
fi

# 5. Smoke test: one container with no network, as the sandbox makes them.
docker_cli run --rm --network none "$BASE_IMAGE" true ||
  die "docker run --rm $BASE_IMAGE true failed; see $DAEMON_LOG"
log "ready: DOCKER_HOST=unix://$SOCKET_PATH"
