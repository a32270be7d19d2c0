// `bench doctor`: which sandboxes work on this machine and, for each thing that does not, why and
// the fix. Every check really runs the thing it names (a container, a namespace), so a pass means
// a rollout would get that far.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { envVar } from "../env.js";
import { opt } from "../options.js";
import { readAll } from "./container/engine/client.js";
import { connectEngine, type Engine } from "./container/engine/engine.js";
import { imageExists } from "./container/image/image.js";
import { relayPrecheck } from "./container/lifecycle/network.js";
import { createNamespaceBackend } from "./namespace/index.js";
import { networkFix, networkUnavailableReason, startSandboxNetwork } from "./namespace/netns.js";

export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export interface DoctorReport {
  checks: DoctorCheck[];
  /** Per sandbox kind: null when it works, else why not. */
  sandboxes: { container: string | null; namespace: string | null };
}

const BASE_IMAGE = "debian:bookworm-slim";
const SETUP =
  "run scripts/setup-podman.sh as root (installs Podman, starts its Docker API, makes the base image)";

function run(file: string, args: string[], timeoutMs = 15_000): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ ok: !err, out: `${stdout}${stderr}`.trim() || (err?.message ?? "") });
    });
  });
}

async function which(name: string): Promise<string | null> {
  for (const dir of (envVar("PATH") ?? "").split(":").concat(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])) {
    if (dir && existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return null;
}

async function containerChecks(checks: DoctorCheck[]): Promise<string | null> {
  let engine: Engine;
  try {
    engine = await connectEngine();
  } catch (err) {
    const detail = (err as Error).message;
    checks.push({
      name: "container engine",
      ok: false,
      detail,
      fix: `${SETUP}, or start Docker, or set DOCKER_HOST`,
    });
    return detail;
  }
  checks.push({
    name: "container engine",
    ok: true,
    detail: `${engine.name} ${engine.version} at ${engine.socket}`,
  });
  const hasBase = await imageExists(engine, BASE_IMAGE).catch(() => false);
  checks.push({
    name: "base image",
    ok: hasBase,
    detail: hasBase ? `${BASE_IMAGE} present` : `${BASE_IMAGE} missing (tasks FROM it would need a registry)`,
    fix: hasBase ? undefined : `${SETUP}, or docker pull ${BASE_IMAGE}`,
  });
  if (!hasBase) return null;
  const started = await runOneContainer(engine);
  checks.push({
    name: "container runtime",
    ok: started === null,
    detail: started ?? "a container started, ran `true` and was removed",
    fix:
      started === null
        ? undefined
        : 'check /etc/containers/containers.conf (runtime = "runc", default_ulimits); scripts/setup-podman.sh writes it',
  });
  const relay = relayPrecheck(engine);
  checks.push({
    name: "gateway access without network",
    ok: relay === null,
    detail:
      relay === null
        ? "no-network tasks reach only the gateway (relay in the container's network namespace)"
        : `not enforced: ${relay}; no-network tasks can then reach more than the gateway`,
    fix: relay === null ? undefined : "run bench as root next to a local engine, with nsenter (util-linux)",
  });
  return started;
}

async function runOneContainer(engine: Engine): Promise<string | null> {
  let id: string | null = null;
  try {
    const body = {
      Image: BASE_IMAGE,
      Entrypoint: ["true"],
      Cmd: [],
      HostConfig: { NetworkMode: "none", Init: true },
    };
    id = (await engine.client.json<{ Id: string }>("POST", "/containers/create", { json: body })).Id;
    await engine.client.send("POST", `/containers/${id}/start`);
    const res = await engine.client.call("POST", `/containers/${id}/wait`);
    const { StatusCode } = JSON.parse((await readAll(res)).toString("utf8")) as { StatusCode: number };
    return StatusCode === 0 ? null : `a container of ${BASE_IMAGE} exited ${StatusCode} running \`true\``;
  } catch (err) {
    return `a container of ${BASE_IMAGE} would not run: ${(err as Error).message}`;
  } finally {
    if (id)
      await engine.client.send("DELETE", `/containers/${id}`, { query: { force: true } }).catch(() => {});
  }
}

async function namespaceChecks(checks: DoctorCheck[]): Promise<string | null> {
  const root = process.getuid?.() === 0;
  const bwrap = await which("bwrap");
  const bwrapRun = bwrap
    ? await run(bwrap, [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "true",
      ])
    : null;
  checks.push({
    name: "bubblewrap",
    ok: bwrapRun?.ok === true,
    detail: !bwrap
      ? "bwrap not found"
      : bwrapRun?.ok
        ? `${bwrap} runs a sandbox`
        : `${bwrap} failed: ${bwrapRun?.out}`,
    fix: bwrapRun?.ok
      ? undefined
      : bwrap
        ? "enable user namespaces (below), or use the unshare fallback"
        : "apt-get install bubblewrap",
  });
  const max = existsSync("/proc/sys/user/max_user_namespaces")
    ? Number(readFileSync("/proc/sys/user/max_user_namespaces", "utf8").trim())
    : null;
  const unshare = await which("unshare");
  const userns = unshare ? await run(unshare, ["--user", "--map-root-user", "true"]) : null;
  checks.push({
    name: "user namespaces",
    ok: userns?.ok === true,
    detail: userns?.ok
      ? `available (max_user_namespaces ${max ?? "?"})`
      : `unavailable: ${userns?.out ?? "no unshare"}`,
    fix: userns?.ok
      ? undefined
      : "sysctl -w user.max_user_namespaces=15000 kernel.unprivileged_userns_clone=1 (Ubuntu 24.04: also kernel.apparmor_restrict_unprivileged_userns=0)",
  });
  const nsArgs = root ? [] : ["--user", "--map-root-user"];
  const unshareRun = unshare
    ? await run(unshare, [...nsArgs, "--mount", "--pid", "--fork", "--net", "true"])
    : null;
  checks.push({
    name: "unshare",
    ok: unshareRun?.ok === true,
    detail: !unshare
      ? "unshare not found"
      : unshareRun?.ok
        ? "mount, pid and net namespaces work"
        : `failed: ${unshareRun?.out}`,
    fix: unshareRun?.ok ? undefined : "apt-get install util-linux, and enable user namespaces",
  });
  checks.push(await namespaceNetworkCheck(root));
  return createNamespaceBackend().unavailableReason();
}

/** Network on in the namespace sandbox: really makes a sandbox network (slirp4netns) and removes it. */
async function namespaceNetworkCheck(root: boolean): Promise<DoctorCheck> {
  const name = "namespace network (slirp4netns)";
  const missing = await networkUnavailableReason();
  if (missing !== null) return { name, ok: false, detail: missing, fix: networkFix() };
  try {
    const network = await startSandboxNetwork(root);
    await network.close();
    return {
      name,
      ok: true,
      detail: "tasks with network get a namespace of their own, without the host's loopback",
    };
  } catch (err) {
    return { name, ok: false, detail: (err as Error).message, fix: networkFix() };
  }
}

export async function runDoctor(): Promise<DoctorReport> {
  const containerList: DoctorCheck[] = [];
  const namespaceList: DoctorCheck[] = [];
  const [container, namespace] = await Promise.all([
    containerChecks(containerList),
    namespaceChecks(namespaceList),
  ]);
  const checks = [...containerList, ...namespaceList];
  checks.push({
    name: "namespace sandbox",
    ok: namespace === null,
    detail: namespace ?? "works",
    fix: namespace === null ? undefined : `apt-get install bubblewrap, or use ${opt("sandbox", "container")}`,
  });
  return { checks, sandboxes: { container, namespace } };
}
