// What the verifier is protected from is read before the agent: which build and config files the
// task shipped (with their content), which processes, symlinks and top-level modules were there,
// which module names a new workspace file must not take, and the image's path variables. Kept in a
// host folder of its own (never the rollout: the agent's files must not land in training data).
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CategorizedError } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import { FILE_VARS, snapshotScript } from "./snapshot-script.js";
import { STDLIB_FALLBACK } from "./stdlib-names.js";

export interface AgentIdentity {
  /** The agent runs as root (every process not seen before it is killed, system files stay open). */
  root: boolean;
  uid: string;
  /** The agent's groups, space-separated (writable-by-group folders count as the agent's). */
  gids: string;
  home: string;
}

export interface VerifierSnapshot {
  /** The host folder: the lists hardening uploads, and files/<path> the staged content. */
  readonly dir: string;
  readonly workdir: string;
  readonly agent: AgentIdentity;
  /** The image's path-valued variables as the verifier would get them (null: not set). */
  readonly imageEnv: Record<string, string>;
  /** Whether the image had a Python to read stdlib and installed module names from (else CPython 3.11's stdlib names). */
  readonly python: boolean;
  readonly counts: { files: number; symlinks: number; processes: number; shadow_names: number };
  /** Removes the host folder. */
  dispose(): Promise<void>;
}

/** Who the agent is, asked once as the agent itself. */
async function agentIdentity(sandbox: Sandbox): Promise<AgentIdentity> {
  if (!sandbox.agentIsNonRoot) return { root: true, uid: "", gids: "", home: "/root" };
  const r = await sandbox.exec('id -u; id -G; printf "%s\\n" "$HOME"', {
    user: "agent",
    cwd: "/",
    maxOutputBytes: 4096,
  });
  const [uid, gids, home] = r.stdout.split("\n");
  if (r.exitCode !== 0 || !uid || !/^\d+$/.test(uid))
    throw new CategorizedError(
      "infra_error",
      `verifier snapshot: could not tell the agent's uid (${r.stderr.trim()})`,
    );
  return { root: false, uid, gids: (gids ?? "").trim(), home: home?.startsWith("/") ? home : "/nonexistent" };
}

/**
 * Taken once the environment is ready, before the agent's setup. `base`: a later step's snapshot
 * keeps the first one's agent, processes, module names and image env (read before any agent ran)
 * and takes the workspace's files again (the step's own files arrived since).
 */
export async function snapshotForVerifier(
  sandbox: Sandbox,
  base?: VerifierSnapshot,
): Promise<VerifierSnapshot> {
  const workdir = sandbox.workdir;
  const agent = base?.agent ?? (await agentIdentity(sandbox));
  const r = await sandbox.exec(snapshotScript(), {
    user: "root",
    cwd: "/",
    env: { BF_W: workdir, BF_AHOME: agent.home, BF_AUID: agent.uid, BF_AGIDS: agent.gids },
    maxOutputBytes: 256 * 1024 * 1024,
  });
  if (r.exitCode !== 0)
    throw new CategorizedError(
      "infra_error",
      `verifier snapshot failed (exit ${r.exitCode}): ${r.stderr.trim().slice(-500)}`,
    );
  const lists = parseSnapshot(r.stdout);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "benchflow-verifier-snapshot-"));
  try {
    for (const [file, content] of lists.staged) {
      const dest = path.join(dir, "files", file);
      await fs.mkdir(path.dirname(dest), { recursive: true });
      await fs.writeFile(dest, content);
    }
    const keep = <T>(mine: T, first: T | undefined) => (base ? (first as T) : mine);
    const processes = keep(lists.processes, base && (await readList(base.dir, "processes")));
    const shadow = keep(lists.shadow, base && (await readList(base.dir, "shadow")));
    const areas = keep(lists.areas, base && (await readList(base.dir, "areas")));
    const imageEnv = base?.imageEnv ?? lists.env;
    await writeList(dir, "processes", processes);
    await writeList(dir, "shadow", shadow);
    await writeList(dir, "modules", lists.modules);
    await writeList(dir, "areas", areas);
    await writeList(dir, "files.tsv", lists.files);
    await writeList(dir, "links.tsv", lists.links);
    return {
      dir,
      workdir,
      agent,
      imageEnv,
      python: base?.python ?? lists.python,
      counts: {
        files: lists.files.length,
        symlinks: lists.links.length,
        processes: processes.length,
        shadow_names: shadow.length,
      },
      dispose: () => fs.rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

interface ParsedSnapshot {
  processes: string[];
  shadow: string[];
  modules: string[];
  areas: string[];
  files: string[];
  links: string[];
  staged: Map<string, Buffer>;
  env: Record<string, string>;
  python: boolean;
}

function parseSnapshot(stdout: string): ParsedSnapshot {
  const out: ParsedSnapshot = {
    processes: [],
    shadow: [],
    modules: [],
    areas: [],
    files: [],
    links: [],
    staged: new Map(),
    env: {},
    python: false,
  };
  const shadow = new Set<string>();
  for (const line of stdout.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab < 0) continue;
    const kind = line.slice(0, tab);
    const rest = line.slice(tab + 1);
    if (kind === "P") out.processes.push(rest);
    else if (kind === "S" || kind === "I") {
      shadow.add(rest);
      out.python = true;
    } else if (kind === "M") out.modules.push(rest);
    else if (kind === "A") out.areas.push(rest);
    else if (kind === "F") out.files.push(rest);
    else if (kind === "L") out.links.push(rest);
    else if (kind === "B") {
      const [b64, file] = splitOnce(rest);
      out.staged.set(file, Buffer.from(b64, "base64"));
    } else if (kind === "E") {
      const [name, value] = splitOnce(rest);
      out.env[name] = value;
    }
  }
  if (!out.python) for (const name of STDLIB_FALLBACK) shadow.add(name);
  out.shadow = [...shadow].sort();
  return out;
}

function splitOnce(s: string): [string, string] {
  const i = s.indexOf("\t");
  return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)];
}

async function writeList(dir: string, name: string, lines: string[]): Promise<void> {
  await fs.writeFile(path.join(dir, name), lines.length ? `${lines.join("\n")}\n` : "");
}

async function readList(dir: string, name: string): Promise<string[]> {
  const text = await fs.readFile(path.join(dir, name), "utf8");
  return text.split("\n").filter((l) => l !== "");
}

/** The path entries of the image's variables, in order, for the hardening script to judge. */
export function pathEntries(env: Record<string, string>): { name: string; entry: string }[] {
  const out: { name: string; entry: string }[] = [];
  for (const [name, value] of Object.entries(env)) {
    const sep = FILE_VARS.includes(name) ? null : name === "LD_PRELOAD" ? /[:\s]+/ : ":";
    const parts = sep === null ? [value] : value.split(sep);
    for (const entry of parts) out.push({ name, entry });
  }
  return out;
}
