// Between the agent's last process and the test: one exec as root, shared by both sandboxes, that
// undoes what the agent could have planted for the verifier (harden-script.ts), and the verifier's
// pinned environment. What it did is recorded in <verifier>/hardening.json.
import { createHash, randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { CategorizedError } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import { writeJsonAtomic } from "../util/fs.js";
import { hardenScript, SNAPSHOT_LISTS } from "./harden-script.js";
import { pathEntries, type VerifierSnapshot } from "./snapshot.js";
import { FILE_VARS } from "./snapshot-script.js";

/** The PATH every Debian-like image has; the verifier's PATH always ends with what it lacks. */
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The steps, in the order they run; each is named in hardening.json even when it did nothing. */
export const HARDENING_STEPS = [
  "processes",
  "symlinks",
  "build_files",
  "conftests",
  "startup_hooks",
  "pytest_plugins",
  "bytecode",
  "tmp_python",
  "shadowing_modules",
  "git_config",
  "verifier_mount",
] as const;

/** Paths listed per step and action in hardening.json (the counts are always whole). */
const MAX_PATHS = 20;

export interface HardeningOptions {
  /** The verifier mount (/tests or /verifier), made fresh. */
  mount: string;
  /** Upstream's [verifier.hardening] cleanup_conftests (default true). */
  cleanupConftests: boolean;
  /** Ours: [verifier.hardening] restore_build_files (default true); false leaves build files as the agent left them. */
  restoreBuildFiles?: boolean;
  /** Kill every process the snapshot did not see; default: when the agent is root. */
  killUnknownProcesses?: boolean;
  /** The verifier's own time limit: hardening gets as long (at least MIN_HARDENING_SEC), never unbounded. */
  timeoutSec?: number;
}

/** Hardening's floor of time: a large honest workspace (node_modules) takes seconds to walk. */
export const MIN_HARDENING_SEC = 60;

export interface HardeningStepRecord {
  name: (typeof HARDENING_STEPS)[number];
  /** Per action (removed, restored, killed, fresh): how many. */
  counts: Record<string, number>;
  /** Per action: the first paths (%q-quoted as bash prints them). */
  paths: Record<string, string[]>;
}

export interface HardeningRecord {
  hardening: "on";
  agent_user: "non-root" | "root";
  cleanup_conftests: boolean;
  restore_build_files: boolean;
  /** Whether the image's Python gave the stdlib and installed module names (else no shadow check). */
  python_found: boolean;
  snapshot: VerifierSnapshot["counts"];
  steps: HardeningStepRecord[];
  /** The variables the verifier gets from hardening (the task's [verifier].env goes on top). */
  env: Record<string, string>;
  /** Path entries of the image's variables left out, because the agent could write them. */
  dropped_env_entries: Record<string, string[]>;
  duration_ms: number;
}

/** The record's `hardening: "off"` form, for a run with --verifier-hardening off. */
export const HARDENING_OFF = { hardening: "off" } as const;

export async function hardenForVerifier(
  sandbox: Sandbox,
  snapshot: VerifierSnapshot,
  opts: HardeningOptions,
): Promise<HardeningRecord> {
  const t0 = Date.now();
  const entries = pathEntries(snapshot.imageEnv);
  await fs.writeFile(
    path.join(snapshot.dir, "entries.tsv"),
    entries.map((e) => `${e.name}\t${e.entry.replace(/[\t\n]/g, " ")}\n`).join(""),
  );
  const digest = createHash("sha256");
  for (const name of SNAPSHOT_LISTS) digest.update(await fs.readFile(path.join(snapshot.dir, name)));
  const upload = `/tmp/.benchflow-harden-${randomBytes(12).toString("hex")}`;
  await sandbox.upload(snapshot.dir, upload);
  const { agent } = snapshot;
  const r = await sandbox.exec(hardenScript(), {
    user: "root",
    cwd: "/",
    env: {
      // Fixed: the image's PATH may name folders the agent wrote (this script runs as root).
      PATH: SYSTEM_PATH,
      BASH_ENV: "",
      ENV: "",
      BF_U: upload,
      BF_DIGEST: digest.digest("hex"),
      BF_W: snapshot.workdir,
      BF_AHOME: agent.home,
      BF_AUID: agent.uid,
      BF_AGIDS: agent.gids,
      BF_MOUNT: opts.mount,
      BF_ROOT_AGENT: (opts.killUnknownProcesses ?? agent.root) ? "1" : "0",
      BF_CONFTESTS: opts.cleanupConftests ? "1" : "0",
      BF_BUILD_FILES: (opts.restoreBuildFiles ?? true) ? "1" : "0",
    },
    maxOutputBytes: 64 * 1024 * 1024,
    timeoutSec: Math.max(MIN_HARDENING_SEC, opts.timeoutSec ?? 0),
  });
  // Only the agent can fill the workspace past what hardening walks in that time (a flood of files).
  if (r.timedOut)
    throw new CategorizedError(
      "verifier_timeout",
      `verifier hardening did not finish within ${Math.max(MIN_HARDENING_SEC, opts.timeoutSec ?? 0)}s (the workspace holds more files than it can check)`,
    );
  if (r.exitCode !== 0)
    throw new CategorizedError(
      "infra_error",
      `verifier hardening failed (exit ${r.exitCode ?? "killed"}): ${r.stderr.trim().slice(-500)}`,
    );
  const steps = new Map(HARDENING_STEPS.map((name) => [name, { name, counts: {}, paths: {} }]));
  const keep = new Set<number>();
  for (const line of r.stdout.split("\n")) {
    const [step, action, what] = line.split("\t");
    if (step === "env" && action === "keep") keep.add(Number(what));
    const s = steps.get(step as HardeningStepRecord["name"]) as HardeningStepRecord | undefined;
    if (!s || !action || what === undefined) continue;
    s.counts[action] = (s.counts[action] ?? 0) + 1;
    const list = s.paths[action] ?? [];
    if (list.length < MAX_PATHS) list.push(what);
    s.paths[action] = list;
  }
  const { env, dropped } = pinnedEnv(entries, keep);
  return {
    hardening: "on",
    agent_user: agent.root ? "root" : "non-root",
    cleanup_conftests: opts.cleanupConftests,
    restore_build_files: opts.restoreBuildFiles ?? true,
    python_found: snapshot.python,
    snapshot: snapshot.counts,
    steps: [...steps.values()],
    env,
    dropped_env_entries: dropped,
    duration_ms: Date.now() - t0,
  };
}

/**
 * The verifier's environment from hardening: each path variable the image set, without the entries
 * the agent could write; PATH ends with the system folders; no bytecode written, no user site.
 * Plugin autoload stays on (pytest --ctrf needs its plugin); the agent's plugins were removed instead.
 */
function pinnedEnv(
  entries: { name: string; entry: string }[],
  keep: Set<number>,
): { env: Record<string, string>; dropped: Record<string, string[]> } {
  const kept: Record<string, string[]> = {};
  const dropped: Record<string, string[]> = {};
  const add = (into: Record<string, string[]>, name: string, entry?: string) => {
    const list = into[name] ?? [];
    if (entry !== undefined) list.push(entry);
    into[name] = list;
  };
  entries.forEach((e, i) => {
    add(kept, e.name, keep.has(i) ? e.entry : undefined);
    if (!keep.has(i)) add(dropped, e.name, e.entry);
  });
  const env: Record<string, string> = {};
  for (const [name, list] of Object.entries(kept)) {
    env[name] = list.join(FILE_VARS.includes(name) ? "" : name === "LD_PRELOAD" ? " " : ":");
  }
  const pathList = env.PATH ? env.PATH.split(":") : [];
  for (const dir of SYSTEM_PATH.split(":")) if (!pathList.includes(dir)) pathList.push(dir);
  env.PATH = pathList.join(":");
  env.PYTHONPATH ??= "";
  env.PYTHONDONTWRITEBYTECODE = "1";
  env.PYTHONNOUSERSITE = "1";
  // A git command the test runs in the workspace must not run the agent's fsmonitor, hooks or pager
  // (a second layer: the git_config step already left the workspace's repositories no program).
  Object.assign(env, {
    GIT_CONFIG_COUNT: "3",
    GIT_CONFIG_KEY_0: "core.fsmonitor",
    GIT_CONFIG_VALUE_0: "false",
    GIT_CONFIG_KEY_1: "core.hooksPath",
    GIT_CONFIG_VALUE_1: "/dev/null",
    GIT_CONFIG_KEY_2: "core.pager",
    GIT_CONFIG_VALUE_2: "cat",
  });
  return { env, dropped };
}

/** The verifier's environment: hardening's pins, then the task's own [verifier].env on top. */
export function verifierEnv(
  record: HardeningRecord | null,
  taskEnv: Record<string, string>,
): Record<string, string> {
  return { ...(record?.env ?? {}), ...taskEnv };
}

/** <verifier>/hardening.json, atomically (before result.json, which the rollout writes last). */
export async function writeHardeningRecord(
  outDir: string,
  record: HardeningRecord | typeof HARDENING_OFF,
): Promise<void> {
  await fs.mkdir(outDir, { recursive: true });
  await writeJsonAtomic(path.join(outDir, "hardening.json"), record);
}
