#!/usr/bin/env bash
# The container tests, in one list. `npm test` runs them on whichever engine answers (Podman in
# CI); CI then runs this list again on Docker: DOCKER_HOST=unix:///run/docker.sock npm run test:containers.
# A file listed here must exist (a typo must not silently drop a suite).
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=(
  src/sandbox/container/compose/model.test.ts
  src/sandbox/container/doctor.test.ts
  src/sandbox/container/image/image-failure.test.ts
  src/sandbox/container/image/image.test.ts
  src/sandbox/container/jq-report.test.ts
  src/sandbox/container/lifecycle/cleanup.test.ts
  src/sandbox/container/lifecycle/interrupt.test.ts
  src/sandbox/container/lifecycle/limits.test.ts
  src/sandbox/container/lifecycle/relay.test.ts
  src/sandbox/container/lifecycle/sandbox.test.ts
  src/sandbox/container/lifecycle/users.test.ts
  src/verifier/harden-container.test.ts
  test/agents-container.test.ts
  test/agents-libc.test.ts
  test/agents-mcp.test.ts
  test/compose.test.ts
  test/container-limits.test.ts
  test/container-run.test.ts
  test/copy-out-container.test.ts
  test/exploits-container.test.ts
  test/gateway-door.test.ts
  test/host-block.test.ts
  test/limits-container.test.ts
  test/network-isolation.test.ts
  test/phase-network.test.ts
  test/runtime-fixtures-container.test.ts
  test/separate-verifier-container.test.ts
  test/steps-and-rewards.test.ts
  test/task-error.test.ts
)

for f in "${FILES[@]}"; do
  [ -f "$f" ] || { echo "container-tests: $f is listed in scripts/container-tests.sh but missing" >&2; exit 1; }
done
# BENCHFLOW_CONTAINER_TESTS_SKIP: files (space-separated) this pass leaves out, named in its log.
if [ -n "${BENCHFLOW_CONTAINER_TESTS_SKIP:-}" ]; then
  KEPT=()
  for f in "${FILES[@]}"; do
    case " $BENCHFLOW_CONTAINER_TESTS_SKIP " in
      *" $f "*) echo "container-tests: leaving out $f (BENCHFLOW_CONTAINER_TESTS_SKIP)" ;;
      *) KEPT+=("$f") ;;
    esac
  done
  FILES=("${KEPT[@]}")
fi
echo "container-tests: ${#FILES[@]} files on ${DOCKER_HOST:-the default engine}"
# Two files at once: the second pass is mostly waiting on the engine (builds, starts), not on the CPU.
exec node --import tsx --test --test-concurrency=2 --test-timeout=900000 "${FILES[@]}"
