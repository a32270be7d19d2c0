// When a task's image cannot run a mounted agent bundle (a glibc binary in a musl image), the agent
// is installed into a derived image instead: built once per (task image id, agent@version, libc),
// tagged benchflow-agent-<name>-<version>:<12 hex>, reused across rollouts and jobs. The verdict of
// the probe (run the binary with --version in a throwaway container) is kept per image and version.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { CategorizedError, messageOf } from "../../../errors.js";
import { readJsonIfExists, writeFileAtomic, writeJsonAtomic } from "../../../util/fs.js";
import type { ReadOnlyMount } from "../../types.js";
import { readAll } from "../engine/client.js";
import type { Engine } from "../engine/engine.js";
import { entriesOf } from "../engine/tar-write.js";
import { ownerLabels } from "../lifecycle/cleanup.js";
import { runContextBuild } from "./build.js";
import { imageExists } from "./image.js";

export type AgentInstallPath = "bundle-mount" | "image-install";
export type Libc = "glibc" | "musl" | "unknown";

export interface InstallChoice {
  path: AgentInstallPath;
  /** The image the rollout runs: the task's, or the derived one. */
  image: string;
  libc: Libc;
  /** True when this call built the derived image. */
  builtNow: boolean;
  /** Said once per run (warnings are deduplicated by text), null for the plain mount. */
  message: string | null;
}

/** What an agent tells the container backend so it can fall back to installing into the image. */
export interface AgentImageFallback {
  agent: string;
  version: string;
  /** The agent's binary inside the sandbox (under the mount). */
  binary: string;
  /** Host folder of the agent built for that C library, laid out like the mounted bundle. */
  bundleFor(libc: "musl"): Promise<string>;
  /** Where probe verdicts are kept across runs. */
  verdictDir: string;
  /** Told which path the rollout takes, before the sandbox is made. */
  onInstallPath(choice: InstallChoice): void;
}

/** A read-only mount that is an agent's bundle (passes through the shared contracts as a ReadOnlyMount). */
export interface AgentBundleMount extends ReadOnlyMount {
  agentFallback?: AgentImageFallback;
}

interface Verdict {
  runs: boolean;
  libc: Libc;
  output: string;
}

const verdicts = new Map<string, Promise<Verdict>>();
const derivedBuilds = new Map<string, Promise<boolean>>();

export interface AgentImageResult {
  image: string;
  mounts: ReadOnlyMount[];
  warnings: string[];
}

/** The image and mounts a rollout uses, after checking each agent bundle can run in the task's image. */
export async function resolveAgentImage(
  engine: Engine,
  taskImage: string,
  mounts: AgentBundleMount[],
  opts: { taskName: string; logDir?: string },
): Promise<AgentImageResult> {
  let image = taskImage;
  const kept: ReadOnlyMount[] = [];
  const warnings: string[] = [];
  for (const mount of mounts) {
    const fb = mount.agentFallback;
    if (!fb) {
      kept.push({ hostPath: mount.hostPath, sandboxPath: mount.sandboxPath });
      continue;
    }
    const imageId = await imageIdOf(engine, image);
    const verdict = await probeOnce(engine, image, imageId, mount, fb);
    if (verdict.runs) {
      kept.push({ hostPath: mount.hostPath, sandboxPath: mount.sandboxPath });
      fb.onInstallPath({ path: "bundle-mount", image, libc: verdict.libc, builtNow: false, message: null });
      continue;
    }
    if (verdict.libc !== "musl") {
      throw new CategorizedError(
        "agent_setup",
        `task ${opts.taskName}: ${fb.agent}'s bundle cannot run in image ${image} and the image has no musl loader to install a musl build for ` +
          `(probe said: ${verdict.output || "nothing"}). Fix: base the task's image on glibc (Debian, Ubuntu) or musl (Alpine)`,
      );
    }
    const tag = derivedTag(fb, imageId, verdict.libc);
    const builtNow = await buildDerivedOnce(engine, {
      from: image,
      tag,
      mount,
      fb,
      labels: {
        "benchflow.agent": `${fb.agent}@${fb.version}`,
        "benchflow.base_image": imageId,
        "benchflow.libc": "musl",
      },
      logFile: opts.logDir ? path.join(opts.logDir, `${opts.taskName}.agent-${fb.agent}.log`) : undefined,
    });
    const message = `${fb.agent}'s bundle cannot run in image ${image} (musl); installed it into image ${tag} (built once, then cached)`;
    warnings.push(message);
    fb.onInstallPath({ path: "image-install", image: tag, libc: "musl", builtNow, message });
    image = tag;
  }
  return { image, mounts: kept, warnings };
}

export function derivedTag(fb: { agent: string; version: string }, imageId: string, libc: Libc): string {
  const hex = createHash("sha256").update(`${imageId} ${fb.agent}@${fb.version} ${libc}`).digest("hex");
  const clean = (s: string) => s.toLowerCase().replace(/[^a-z0-9._-]+/g, "-");
  return `benchflow-agent-${clean(fb.agent)}-${clean(fb.version)}:${hex.slice(0, 12)}`;
}

async function imageIdOf(engine: Engine, image: string): Promise<string> {
  const info = await engine.client.json<{ Id: string }>("GET", `/images/${encodeURIComponent(image)}/json`);
  return info.Id.replace(/^sha256:/, "");
}

function probeOnce(
  engine: Engine,
  image: string,
  imageId: string,
  mount: AgentBundleMount,
  fb: AgentImageFallback,
): Promise<Verdict> {
  const key = `${engine.socket} ${imageId} ${fb.agent}@${fb.version}`;
  let pending = verdicts.get(key);
  if (!pending) {
    const file = path.join(fb.verdictDir, `${imageId.slice(0, 12)}-${fb.agent}@${fb.version}.json`);
    pending = (async () => {
      const saved = await readJsonIfExists<Verdict>(file).catch(() => undefined);
      if (saved && typeof saved.runs === "boolean") return saved;
      const verdict = await probe(engine, image, mount, fb);
      await fs.mkdir(fb.verdictDir, { recursive: true });
      await writeJsonAtomic(file, {
        ...verdict,
        image,
        image_id: imageId,
        probed_at: new Date().toISOString(),
      });
      return verdict;
    })();
    verdicts.set(key, pending);
    pending.catch(() => verdicts.delete(key));
  }
  return pending;
}

// The binary's own exit status says whether it runs; the loaders present say which C library the image has.
const PROBE = `if "$1" --version >/dev/null 2>/tmp/.bf-probe; then echo "BF_PROBE runs"; else echo "BF_PROBE fails $?"; head -c 300 /tmp/.bf-probe; echo; fi
for f in /lib/ld-musl-*.so.1; do [ -e "$f" ] && echo "BF_LIBC musl"; done
for f in /lib64/ld-linux-*.so.2 /lib/ld-linux-*.so.* /lib/*-linux-gnu/libc.so.6; do [ -e "$f" ] && echo "BF_LIBC glibc"; done
exit 0`;

async function probe(
  engine: Engine,
  image: string,
  mount: AgentBundleMount,
  fb: AgentImageFallback,
): Promise<Verdict> {
  let id: string | null = null;
  try {
    const created = await engine.client.json<{ Id: string }>("POST", "/containers/create", {
      json: {
        Image: image,
        Entrypoint: ["sh", "-c", PROBE, "probe", fb.binary],
        Cmd: [],
        User: "root",
        Tty: true,
        Labels: ownerLabels(),
        HostConfig: { NetworkMode: "none", Binds: [`${mount.hostPath}:${mount.sandboxPath}:ro`] },
      },
    });
    id = created.Id;
    await engine.client.send("POST", `/containers/${id}/start`);
    await engine.client.json("POST", `/containers/${id}/wait`);
    const logs = await readAll(
      await engine.client.call("GET", `/containers/${id}/logs`, { query: { stdout: true, stderr: true } }),
    );
    const text = logs.toString("utf8").replace(/\r/g, "");
    const runs = /^BF_PROBE runs$/m.test(text);
    const musl = /^BF_LIBC musl$/m.test(text);
    const glibc = /^BF_LIBC glibc$/m.test(text);
    const libc: Libc = glibc ? "glibc" : musl ? "musl" : "unknown";
    const output = text
      .replace(/^BF_LIBC .*\n?/gm, "")
      .trim()
      .slice(0, 400);
    return { runs, libc, output };
  } catch (err) {
    throw new CategorizedError(
      "agent_setup",
      `checking whether ${fb.agent}@${fb.version} runs in image ${image} failed: ${messageOf(err)}`,
    );
  } finally {
    if (id)
      await engine.client
        .send("DELETE", `/containers/${id}`, { query: { force: true } })
        .catch(() => undefined);
  }
}

interface DerivedRequest {
  from: string;
  tag: string;
  mount: AgentBundleMount;
  fb: AgentImageFallback;
  labels: Record<string, string>;
  logFile?: string;
}

/** True when this call built it; concurrent rollouts wait on the one build in flight. */
function buildDerivedOnce(engine: Engine, r: DerivedRequest): Promise<boolean> {
  const key = `${engine.socket} ${r.tag}`;
  const joined = derivedBuilds.get(key);
  if (joined) return joined.then(() => false);
  const pending = buildDerived(engine, r).finally(() => derivedBuilds.delete(key));
  derivedBuilds.set(key, pending);
  return pending;
}

async function buildDerived(engine: Engine, r: DerivedRequest): Promise<boolean> {
  if (await imageExists(engine, r.tag)) return false;
  const fail = (why: string) =>
    new CategorizedError(
      "agent_setup",
      `installing ${r.fb.agent}@${r.fb.version} (musl) into an image derived from ${r.from} failed: ${why}${r.logFile ? ` (log: ${r.logFile})` : ""}`,
    );
  const bundle = await r.fb.bundleFor("musl").catch((err) => {
    throw fail(messageOf(err));
  });
  const dockerfile = `FROM ${r.from}\nCOPY agent/ ${r.mount.sandboxPath}/\n`;
  const outcome = await runContextBuild(engine, {
    tag: r.tag,
    labels: r.labels,
    dockerfile: "Dockerfile",
    context: [
      { name: "Dockerfile", type: "file", mode: 0o644, data: Buffer.from(dockerfile) },
      { name: "agent", type: "dir", mode: 0o755 },
      ...(await entriesOf(bundle, "agent")),
    ],
    timeoutSec: 900,
  });
  if (r.logFile) {
    await fs.mkdir(path.dirname(r.logFile), { recursive: true });
    await writeFileAtomic(r.logFile, `${dockerfile}\n${outcome.log}`);
  }
  if (!outcome.ok) throw fail(outcome.error ?? "unknown error");
  return true;
}
