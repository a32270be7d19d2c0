// Agent bundles: each agent CLI is installed from npm once per version into a host cache
// (<cache>/<name>@<version>/) and mounted read-only into sandboxes, so no rollout installs anything.
// Installs go to a temp folder renamed into place, one at a time per bundle (in this process by a
// shared promise, across processes by a lock file naming its pid).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { envVar } from "../../env.js";
import { readJsonIfExists, writeJsonAtomic } from "../../util/fs.js";
import { pidAlive } from "../../util/process.js";

export interface BundleSpec {
  /** The agent's name; the cache folder is <name>@<version>. */
  name: string;
  version: string;
  /** npm packages, pinned exactly (name@version). */
  packages: string[];
  /** Copy this process's Node binary to node/bin/node (agents written in JavaScript need it). */
  withNode?: boolean;
  /** Programs put in the bundle's bin/ (on the agent's PATH): name -> path relative to the bundle. */
  links?: Record<string, string>;
  /** Paths (relative to the bundle) removed after the install: parts of helper packages not needed. */
  prune?: string[];
  /** Install the packages built for this C library (npm --libc); the folder is <name>@<version>-<libc>. */
  libc?: "musl";
  /** Symlinks made after the install: path -> target, both relative to the bundle (same layout as another build). */
  aliases?: Record<string, string>;
  /**
   * Shared libraries copied from this host into lib/ (a native agent linked against libraries slim
   * images lack, such as OpenSSL); the launch gives them to the agent's own process only.
   */
  hostLibs?: string[];
}

export interface BundleManifest {
  name: string;
  version: string;
  packages: string[];
  /** What was installed besides the version (packages, links, pruning): a changed recipe reinstalls. */
  recipe: string;
  installed_at: string;
  /** How long the first (and only) install took. */
  install_sec: number;
  node_version: string | null;
}

export interface Bundle {
  dir: string;
  manifest: BundleManifest;
  /** True when this call installed it; false when it was in the cache. */
  installedNow: boolean;
}

const MANIFEST = "bundle.json";
const inFlight = new Map<string, Promise<Bundle>>();

/** $BENCHFLOW_AGENT_CACHE, else ~/.cache/benchflow/agents. */
export function agentCacheDir(): string {
  const cache = envVar("BENCHFLOW_AGENT_CACHE");
  if (cache) return path.resolve(cache);
  const base = envVar("XDG_CACHE_HOME") || path.join(os.homedir(), ".cache");
  return path.join(base, "benchflow", "agents");
}

export function bundleDir(spec: BundleSpec, cacheDir = agentCacheDir()): string {
  return path.join(cacheDir, `${spec.name}@${spec.version}${spec.libc ? `-${spec.libc}` : ""}`);
}

/** The bundle, installed now if the cache lacks it. */
export function ensureBundle(
  spec: BundleSpec,
  opts: { cacheDir?: string; signal?: AbortSignal } = {},
): Promise<Bundle> {
  const dir = bundleDir(spec, opts.cacheDir);
  let pending = inFlight.get(dir);
  if (!pending) {
    pending = ensureAt(spec, dir, opts.signal).finally(() => inFlight.delete(dir));
    inFlight.set(dir, pending);
  }
  return pending;
}

function recipeOf(spec: BundleSpec): string {
  const { packages, links, prune, withNode, libc, aliases, hostLibs } = spec;
  const base = { packages, links: links ?? {}, prune: prune ?? [], withNode: withNode === true };
  // Bundles made before libc, aliases and hostLibs existed keep their recipe (and are not reinstalled).
  const more = libc || aliases ? { ...base, libc: libc ?? null, aliases: aliases ?? {} } : base;
  return JSON.stringify(hostLibs ? { ...more, hostLibs } : more);
}

/** The manifest of a complete bundle made from this recipe, else null. */
async function readManifest(dir: string, spec: BundleSpec): Promise<BundleManifest | null> {
  const m = (await readJsonIfExists<BundleManifest>(path.join(dir, MANIFEST)).catch(() => undefined)) ?? null;
  return m && m.recipe === recipeOf(spec) ? m : null;
}

async function ensureAt(spec: BundleSpec, dir: string, signal?: AbortSignal): Promise<Bundle> {
  const ready = await readManifest(dir, spec);
  if (ready) return { dir, manifest: ready, installedNow: false };
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  for (;;) {
    if (await takeLock(lock)) break;
    // Another process installs it: wait for its manifest, or for its lock to go stale.
    await new Promise((r) => setTimeout(r, 500));
    if (signal?.aborted)
      throw new Error(`waiting for ${spec.name}@${spec.version} to be installed was interrupted`);
    const done = await readManifest(dir, spec);
    if (done) return { dir, manifest: done, installedNow: false };
  }
  try {
    const done = await readManifest(dir, spec);
    if (done) return { dir, manifest: done, installedNow: false };
    const manifest = await install(spec, dir, signal);
    return { dir, manifest, installedNow: true };
  } finally {
    await fs.rm(lock, { force: true });
  }
}

async function takeLock(lock: string): Promise<boolean> {
  try {
    await fs.writeFile(lock, `${process.pid}\n`, { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const holder = Number.parseInt(await fs.readFile(lock, "utf8").catch(() => ""), 10);
  if (Number.isInteger(holder) && holder !== process.pid && pidAlive(holder)) return false;
  // The holder died mid-install: its temp folder is garbage and the lock is ours to retake.
  await fs.rm(lock, { force: true });
  return takeLock(lock);
}

async function install(spec: BundleSpec, dir: string, signal?: AbortSignal): Promise<BundleManifest> {
  const t0 = performance.now();
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(3).toString("hex")}`;
  await removeDeadTemps(dir);
  await fs.mkdir(tmp, { recursive: true });
  try {
    await writeJsonAtomic(path.join(tmp, "package.json"), { name: "benchflow-agent-bundle", private: true });
    // No install scripts: bundles point at the platform packages' binaries directly.
    await npm(
      [
        "install",
        "--prefix",
        tmp,
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--loglevel=error",
        ...(spec.libc ? ["--os=linux", `--libc=${spec.libc}`, `--cpu=${process.arch}`] : []),
        ...spec.packages,
      ],
      signal,
    );
    for (const p of spec.prune ?? []) await fs.rm(path.join(tmp, p), { recursive: true, force: true });
    if (spec.links) await fs.mkdir(path.join(tmp, "bin"), { recursive: true });
    for (const [name, target] of Object.entries(spec.links ?? {})) {
      if (!(await fs.stat(path.join(tmp, target)).catch(() => null))?.isFile()) {
        throw new Error(`bundle ${spec.name}@${spec.version}: ${target} is missing after the install`);
      }
      await fs.symlink(
        path.relative(path.join(tmp, "bin"), path.join(tmp, target)),
        path.join(tmp, "bin", name),
      );
    }
    for (const [at, target] of Object.entries(spec.aliases ?? {})) {
      if (!(await fs.stat(path.join(tmp, target)).catch(() => null))?.isFile()) {
        throw new Error(`bundle ${spec.name}@${spec.version}: ${target} is missing after the install`);
      }
      await fs.mkdir(path.dirname(path.join(tmp, at)), { recursive: true });
      await fs.symlink(
        path.relative(path.dirname(path.join(tmp, at)), path.join(tmp, target)),
        path.join(tmp, at),
      );
    }
    for (const lib of spec.hostLibs ?? []) await copyHostLib(lib, path.join(tmp, "lib"));
    if (spec.withNode) {
      await fs.mkdir(path.join(tmp, "node", "bin"), { recursive: true });
      await fs.copyFile(process.execPath, path.join(tmp, "node", "bin", "node"));
      await fs.chmod(path.join(tmp, "node", "bin", "node"), 0o755);
    }
    const manifest: BundleManifest = {
      name: spec.name,
      version: spec.version,
      packages: spec.packages,
      recipe: recipeOf(spec),
      installed_at: new Date().toISOString(),
      install_sec: Math.round(performance.now() - t0) / 1000,
      node_version: spec.withNode ? process.version : null,
    };
    await writeJsonAtomic(path.join(tmp, MANIFEST), manifest);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(tmp, dir);
    return manifest;
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Temp folders of installs whose process died. */
async function removeDeadTemps(dir: string): Promise<void> {
  const prefix = `${path.basename(dir)}.tmp-`;
  for (const name of await fs.readdir(path.dirname(dir)).catch(() => [])) {
    const pid = Number.parseInt(name.slice(prefix.length), 10);
    if (name.startsWith(prefix) && Number.isInteger(pid) && !pidAlive(pid)) {
      await fs.rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
    }
  }
}

function npm(args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const onAbort = () => child.pid && process.kill(-child.pid, "SIGKILL");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (err) => reject(new Error(`cannot run npm: ${err.message}`)));
    child.on("close", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (code === 0) resolve();
      else
        reject(
          new Error(`npm install failed (exit ${code}): ${output.trim().split("\n").slice(-5).join(" | ")}`),
        );
    });
  });
}

const LIB_DIRS = [
  `/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu`,
  "/lib64",
  "/usr/lib64",
  "/usr/lib",
];

/** A shared library of this host (its real file, not the link) into `dest`. */
async function copyHostLib(name: string, dest: string): Promise<void> {
  await fs.mkdir(dest, { recursive: true });
  for (const dir of LIB_DIRS) {
    const from = path.join(dir, name);
    if (await fs.stat(from).catch(() => null)) return fs.copyFile(from, path.join(dest, name));
  }
  throw new Error(
    `${name} is not on this host (looked in ${LIB_DIRS.join(", ")}): install it (Debian: libssl3)`,
  );
}
