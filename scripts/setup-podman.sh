#!/usr/bin/env bash
# Make this machine able to run `--sandbox container` without Docker: Podman serving the Docker
# Engine API on /run/podman/podman.sock, plus a Debian base image made from Debian's archive
# (no registry needed). Idempotent: a second run only checks. Settings: shared/MACHINE-NOTES.md.
set -euo pipefail

SOCKET_PATH=${BENCHFLOW_PODMAN_SOCKET:-/run/podman/podman.sock}
BASE_IMAGE=${BENCHFLOW_BASE_IMAGE:-docker.io/library/debian:bookworm-slim}
SUITE=${BENCHFLOW_DEBIAN_SUITE:-bookworm}
CACHE_DIR=${BENCHFLOW_CACHE_DIR:-/var/cache/benchflow}
ROOTFS_TAR="$CACHE_DIR/debian-$SUITE-minbase.tar"
SERVICE_LOG=${BENCHFLOW_PODMAN_LOG:-/var/log/benchflow-podman-service.log}
CONF=/etc/containers/containers.conf
MARKER="# written by benchflow scripts/setup-podman.sh"

log() { echo "setup-podman: $*"; }
die() {
  echo "setup-podman: ERROR: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (it installs packages, writes $CONF and starts the service): sudo $0"

# 1. Packages.
need=()
for bin in podman runc debootstrap curl; do
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || need+=("$bin")
done
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 ||
    die "missing ${need[*]} and no apt-get here; install podman, runc, debootstrap and curl with your package manager"
  log "installing ${need[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || die "apt-get update failed; check that Debian's archive is reachable"
  apt-get install -y -q podman runc debootstrap curl >/dev/null ||
    die "apt-get install podman runc debootstrap curl failed (see the output above)"
fi
export PATH="$PATH:/usr/sbin:/sbin"

# 1b. What the musl-image tests build from (test/agents-libc.test.ts): static busybox and bash, musl's loader.
if ! dpkg -s busybox-static bash-static musl >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    log "installing busybox-static bash-static musl (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -q busybox-static bash-static musl >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null && apt-get install -y -q busybox-static bash-static musl >/dev/null; }; } ||
      log "WARNING: apt-get install busybox-static bash-static musl failed; the musl-image test will say what is missing"
  else
    log "no apt-get: install static busybox and bash and musl yourself to run the musl-image test"
  fi
fi

# 2. Engine settings: runc (crun fails on hybrid cgroups here) and ulimits we may set without CAP_SYS_RESOURCE.
if [ ! -f "$CONF" ] || grep -qF "$MARKER" "$CONF"; then
  mkdir -p "$(dirname "$CONF")"
  cat >"$CONF.tmp" <<EOF
$MARKER
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
EOF
  if cmp -s "$CONF.tmp" "$CONF"; then
    rm -f "$CONF.tmp"
  else
    mv "$CONF.tmp" "$CONF"
    log "wrote $CONF"
  fi
else
  log "keeping your own $CONF (it should set runtime = \"runc\" and default_ulimits if containers fail to start)"
fi

# 3. The Docker-compatible service.
ping_socket() { curl -fsS --max-time 2 --unix-socket "$SOCKET_PATH" http://d/_ping >/dev/null 2>&1; }
# A service started from a folder since deleted still answers pings, but conmon cannot start
# containers ("Failed to get working directory"): restart it from /.
for pid in $(pgrep -f "podman system service.*$SOCKET_PATH" || true); do
  case "$(readlink "/proc/$pid/cwd" 2>/dev/null)" in
  *" (deleted)")
    log "restarting podman system service (pid $pid): the folder it was started in is gone"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    ;;
  esac
done
if ping_socket; then
  log "engine already answering on $SOCKET_PATH"
else
  mkdir -p "$(dirname "$SOCKET_PATH")"
  rm -f "$SOCKET_PATH"
  log "starting podman system service on unix://$SOCKET_PATH (log: $SERVICE_LOG)"
  # From /: the service outlives the folder this script ran in.
  setsid nohup env -C / podman system service --time=0 "unix://$SOCKET_PATH" >>"$SERVICE_LOG" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    ping_socket && break
    sleep 0.5
  done
  ping_socket || die "podman system service did not answer on $SOCKET_PATH within 30 s; see $SERVICE_LOG"
  log "engine answering on $SOCKET_PATH"
fi

# 4. The base image, from Debian's archive (cached so a second machine setup is fast).
if podman image exists "$BASE_IMAGE"; then
  log "base image $BASE_IMAGE present"
else
  mkdir -p "$CACHE_DIR"
  if [ ! -s "$ROOTFS_TAR" ]; then
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs"' EXIT
    log "debootstrap --variant=minbase $SUITE (about 30 s, ~200 MB)"
    debootstrap --variant=minbase "$SUITE" "$rootfs" >"$CACHE_DIR/debootstrap.log" 2>&1 ||
      die "debootstrap failed; see $CACHE_DIR/debootstrap.log (is deb.debian.org reachable?)"
    tar -C "$rootfs" -cf "$ROOTFS_TAR.tmp" . || die "could not write $ROOTFS_TAR"
    mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
    rm -rf "$rootfs"
    trap - EXIT
  fi
  log "importing $ROOTFS_TAR as $BASE_IMAGE"
  podman import --quiet --change 'CMD ["bash"]' "$ROOTFS_TAR" "$BASE_IMAGE" >/dev/null ||
    die "podman import of $ROOTFS_TAR failed; delete it and run again"
fi

# 5. Smoke test: one container through the same settings the sandbox uses.
podman run --rm --network none "$BASE_IMAGE" true ||
  die "podman run --rm $BASE_IMAGE true failed; check $CONF (runtime = \"runc\", default_ulimits)"
log "ready: DOCKER_HOST=unix://$SOCKET_PATH"
