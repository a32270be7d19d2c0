// Builds a sandbox's scratch tree: skeleton, agent folders, the task's Dockerfile COPYs in place.
import { promises as fs } from "node:fs";
import path from "node:path";
import { anyPhaseHasNetwork } from "../../task/network.js";
import { type Task, workspaceOf } from "../../task/types.js";
import { SandboxSetupError, type SandboxSpec } from "../types.js";
import { AGENT_HOME, isWithin, systemEntriesOf } from "./host.js";
import { sandboxPathOf, systemRootOf, type TreeView } from "./paths.js";
import type { ToolSetup } from "./probe.js";
import { reapOrphanScratch } from "./reap.js";
import { NamespaceSandbox } from "./sandbox.js";
import {
  makeAgentFolders,
  makeScratchRoot,
  makeSkeleton,
  removeTree,
  scratchParent,
  writeAgentAccounts,
} from "./scratch.js";
import { type Ownership, ReadOnlyPathError, upload } from "./transfer.js";

export interface CreateOptions {
  scratchDir?: string;
  readOnlyPaths?: string[];
  hidePaths?: string[];
}

export async function createNamespaceSandbox(
  spec: SandboxSpec,
  setup: ToolSetup,
  options: CreateOptions,
): Promise<NamespaceSandbox> {
  const { task } = spec;
  const system = await systemEntriesOf(options.readOnlyPaths);
  const workspace = workspaceOf(task);
  if (!workspace.startsWith("/")) {
    throw new SandboxSetupError(`task ${task.name}: workdir "${workspace}" must be an absolute path`);
  }
  if (workspace === "/" || ["/proc", "/dev"].some((p) => isWithin(workspace, p))) {
    throw new SandboxSetupError(
      `task ${task.name}: ${workspace} cannot be the workspace; use a folder such as /app`,
    );
  }
  const view: TreeView = { fsRoot: "", system, hidden: [] };
  const readOnlyRoot = systemRootOf(view, sandboxPathOf(workspace));
  if (readOnlyRoot !== null) {
    throw new SandboxSetupError(
      `task ${task.name}: workdir ${workspace} lies in ${readOnlyRoot}, which the namespace sandbox shows read-only; use --sandbox container`,
    );
  }
  const parent = await scratchParent(options.scratchDir);
  await reapOrphanScratch(parent);
  const hidden = await hiddenPaths(view, [
    task.dir,
    task.environmentDir,
    task.verifierDir,
    task.solutionDir,
    parent,
    ...(options.hidePaths ?? []),
  ]);
  const scratch = await makeScratchRoot(parent, spec.rolloutName);
  view.fsRoot = scratch.fsRoot;
  view.hidden = hidden;
  try {
    const agent = setup.identity.agent;
    const agentAreas = [workspace, "/logs/agent", "/logs/artifacts", AGENT_HOME];
    const ownership: Ownership = { agent, agentAreas: [...agentAreas, "/tmp"] };
    await makeSkeleton(scratch.fsRoot, system, setup.tool);
    const [fileOverrides] = await Promise.all([
      agent ? writeAgentAccounts(scratch.metaDir, agent) : Promise.resolve([]),
      makeAgentFolders(scratch.fsRoot, agentAreas, agent),
    ]);
    const warnings = [...setup.warnings, ...(await placeCopies(task, view, ownership))];
    const mounts = await mountPoints(spec, view);
    const sandbox = new NamespaceSandbox({
      spec,
      setup,
      dir: scratch.dir,
      view,
      fileOverrides: [...fileOverrides, ...mounts],
      ownership,
      warnings,
    });
    // A network that cannot be made refuses the trial now, not halfway through a phase.
    if (spec.network || anyPhaseHasNetwork(task)) await sandbox.startNetwork();
    return sandbox;
  } catch (err) {
    await removeTree(scratch.dir);
    if (err instanceof SandboxSetupError) throw err;
    throw new SandboxSetupError(
      `task ${task.name}: preparing the namespace sandbox failed: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/** Read-only mounts ride on the file-override binds; their mountpoints are made in the tree first. */
async function mountPoints(spec: SandboxSpec, view: TreeView): Promise<{ host: string; sandbox: string }[]> {
  const out: { host: string; sandbox: string }[] = [];
  for (const m of spec.readOnlyMounts ?? []) {
    const sandbox = sandboxPathOf(m.sandboxPath);
    const root = systemRootOf(view, sandbox);
    if (root !== null || sandbox === "/" || ["/proc", "/dev"].some((p) => isWithin(sandbox, p))) {
      throw new SandboxSetupError(
        `read-only mount ${sandbox} lies in ${root ?? sandbox}: mount it elsewhere (e.g. under /opt)`,
      );
    }
    const st = await fs.stat(m.hostPath).catch(() => null);
    if (st === null) throw new SandboxSetupError(`read-only mount: host path ${m.hostPath} does not exist`);
    const point = path.join(view.fsRoot, sandbox);
    if (st.isDirectory()) await fs.mkdir(point, { recursive: true });
    else {
      await fs.mkdir(path.dirname(point), { recursive: true });
      await fs.writeFile(point, "", { flag: "a" });
    }
    out.push({ host: m.hostPath, sandbox });
  }
  return out;
}

/** Task and job folders that would show through a read-only system folder get covered. */
async function hiddenPaths(view: TreeView, candidates: (string | null)[]): Promise<string[]> {
  const real = await Promise.all(
    candidates.map(async (p) => {
      if (p === null) return null;
      const resolved = await fs.realpath(p).catch(() => null);
      const st = resolved === null ? null : await fs.stat(resolved).catch(() => null);
      return st?.isDirectory() && resolved !== null && systemRootOf(view, resolved) !== null
        ? resolved
        : null;
    }),
  );
  const found = [
    ...new Set(real.filter((p): p is string => p !== null && !view.system.some((e) => e.path === p))),
  ];
  // Covering a folder hides everything below it; a nested cover would have no mountpoint.
  return found.filter((p) => !found.some((q) => q !== p && isWithin(p, q)));
}

/** Puts the Dockerfile's COPY/ADD sources where the image would have them; returns warnings. */
async function placeCopies(task: Task, view: TreeView, ownership: Ownership): Promise<string[]> {
  const warnings: string[] = [];
  const workdir = workspaceOf(task);
  for (const copy of task.dockerfile?.copies ?? []) {
    const base = path.posix.resolve(workdir, copy.dest);
    const intoFolder = copy.dest.endsWith("/") || copy.sources.length > 1;
    for (const source of copy.sources) {
      const st = await fs.stat(source).catch(() => null);
      if (st === null)
        throw new SandboxSetupError(
          `${task.dockerfile?.path}:${copy.line}: COPY source ${source} does not exist`,
        );
      const dest = intoFolder && st.isFile() ? path.posix.join(base, path.basename(source)) : base;
      await place(source, dest, copy.line);
    }
  }
  return warnings;

  async function place(source: string, dest: string, line: number): Promise<void> {
    const readOnlyRoot = systemRootOf(view, dest);
    if (readOnlyRoot !== null) {
      warnings.push(
        `${task.dockerfile?.path}:${line}: COPY to ${dest} skipped: ${readOnlyRoot} is read-only in the namespace sandbox; use --sandbox container for this task`,
      );
      return;
    }
    const st = await fs.stat(source);
    // A folder copied over "/" (or over /usr's parent) is placed child by child so system folders are skipped.
    if (st.isDirectory() && view.system.some((e) => isWithin(e.path, dest) && e.path !== dest)) {
      for (const name of await fs.readdir(source))
        await place(path.join(source, name), path.posix.join(dest, name), line);
      return;
    }
    try {
      await upload(view, source, dest, { ownership, ownedByAgent: true });
    } catch (err) {
      if (!(err instanceof ReadOnlyPathError)) throw err;
      warnings.push(`${task.dockerfile?.path}:${line}: COPY to ${dest} skipped: ${err.message}`);
    }
  }
}
