// Builds a sandbox's scratch tree: skeleton, agent folders, the task's Dockerfile COPYs in place.
import { promises as fs } from "node:fs";
import path from "node:path";
import { opt } from "../../options.js";
import { anyPhaseHasNetwork } from "../../task/network.js";
import { type Task, workspaceOf } from "../../task/types.js";
import { SandboxSetupError, type SandboxSpec } from "../types.js";
import { AGENT_HOME, AGENT_UID, isWithin, systemEntriesOf } from "./host.js";
import { releaseRecorded, SandboxResources } from "./limits.js";
import { loopbackUnavailableReason } from "./netns.js";
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
  scratchParentsInUse,
  writeAgentAccounts,
} from "./scratch.js";
import { rememberJobsFolders, seenJobsFolders } from "./seen-jobs.js";
import { type Ownership, ReadOnlyPathError, upload } from "./transfer.js";

export interface CreateOptions {
  scratchDir?: string;
  readOnlyPaths?: string[];
  hidePaths?: string[];
  /** Processes a sandbox may hold; DEFAULT_PIDS_LIMIT unless an operator (or a test) says less. */
  pidsLimit?: number;
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
      `task ${task.name}: workdir ${workspace} lies in ${readOnlyRoot}, which the namespace sandbox shows read-only; use ${opt("sandbox", "container")}`,
    );
  }
  const parent = await scratchParent(options.scratchDir);
  await reapOrphanScratch(parent);
  const rootAgent = agentWantsRoot(spec, setup);
  const hidden = await hiddenPaths(view, [
    task.dir,
    task.environmentDir,
    task.verifierDir,
    task.solutionDir,
    ...scratchParentsInUse(),
    ...(await jobFolders(view, spec.jobDir)),
    ...(options.hidePaths ?? []),
  ]);
  const scratch = await makeScratchRoot(parent, spec.rolloutName);
  view.fsRoot = scratch.fsRoot;
  view.hidden = hidden;
  let resources: SandboxResources | undefined;
  try {
    resources = await SandboxResources.apply(task, scratch, options.pidsLimit);
    const agent = setup.identity.agent;
    const agentAreas = [workspace, "/logs/agent", "/logs/artifacts", AGENT_HOME];
    const ownership: Ownership = { agent, agentAreas: [...agentAreas, "/tmp"] };
    await makeSkeleton(scratch.fsRoot, system, setup.tool);
    const [fileOverrides] = await Promise.all([
      agent ? writeAgentAccounts(scratch.metaDir, agent) : Promise.resolve([]),
      makeAgentFolders(scratch.fsRoot, agentAreas, agent),
    ]);
    const warnings = [
      ...setup.warnings,
      ...rootAgent.warnings,
      ...resources.warnings,
      ...(await placeCopies(task, view, ownership)),
    ];
    const mounts = await mountPoints(spec, view);
    const sandbox = new NamespaceSandbox({
      spec,
      setup,
      dir: scratch.dir,
      view,
      fileOverrides: [...fileOverrides, ...mounts],
      ownership,
      warnings,
      resources,
      rootAgent: rootAgent.root,
      relayed: await relayedHere(spec, setup),
    });
    // A network that cannot be made refuses the rollout now, not halfway through a phase.
    await sandbox.prepareNetworks(anyPhaseHasNetwork(task));
    return sandbox;
  } catch (err) {
    await resources?.release().catch(() => undefined);
    if (resources === undefined) await releaseRecorded(scratch.dir).catch(() => undefined);
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

/**
 * The task's agent user. "root": uid 0 inside a user namespace of the agent's own (never real
 * root, never silently the agent user). Any other name: the sandbox's agent user, said in a warning.
 */
function agentWantsRoot(spec: SandboxSpec, setup: ToolSetup): { root: boolean; warnings: string[] } {
  const asked = spec.task.config.agent.user;
  const { identity } = setup;
  if (asked === null) return { root: false, warnings: [] };
  if (asked !== "root") {
    const who = identity.hostRoot ? `agent (uid ${AGENT_UID})` : `uid ${identity.hostUid}`;
    return {
      root: false,
      warnings: [
        `[agent] user = "${asked}": the namespace sandbox has no user "${asked}" and runs the agent as its own user, ${who}; use ${opt("sandbox", "container")} to get that user`,
      ],
    };
  }
  if (!identity.hostRoot) {
    return {
      root: true,
      warnings: [
        `[agent] user = "root": the agent runs as root of the sandbox's user namespace, as the verifier does, so in a shared verifier environment it can write the verifier's files (/tests, /logs/verifier); run as host root or use ${opt("sandbox", "container")} to keep them apart`,
      ],
    };
  }
  if (identity.agent !== null && identity.unshare === null) {
    throw new SandboxSetupError(
      `task ${spec.task.name}: [agent] user = "root" needs util-linux unshare on the host to give the agent a user namespace of its own (apt-get install util-linux), or use ${opt("sandbox", "container")}`,
    );
  }
  return { root: true, warnings: [] };
}

/** System folders the sandbox needs whole: a jobs folder lying directly in one hides only itself. */
const NEEDED_FOLDERS = new Set(
  ["/usr", "/etc", "/opt", "/srv"].flatMap((p) => [
    p,
    ...["local", "lib", "share", "bin", "sbin", "include", "src", "etc"].map((n) => `${p}/${n}`),
  ]),
);

/**
 * The job folder (its rollouts, builds/, the job's own files), the jobs folder that holds its
 * siblings, and every jobs folder an earlier run left under a system folder (seen-jobs.ts).
 */
async function jobFolders(view: TreeView, jobDir: string | undefined): Promise<string[]> {
  if (jobDir === undefined) return [];
  const job = await fs.realpath(jobDir).catch(() => path.resolve(jobDir));
  const jobs = path.dirname(job);
  const needed = NEEDED_FOLDERS.has(jobs) || view.system.some((e) => isWithin(e.path, jobs));
  const own = needed ? [job] : [job, jobs];
  // Under a shown system folder: remembered, so every later sandbox on this host hides it too.
  if (systemRootOf(view, job) !== null) await rememberJobsFolders(needed ? [job] : [jobs]);
  return [...own, ...(await seenJobsFolders())];
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
        `${task.dockerfile?.path}:${line}: COPY to ${dest} skipped: ${readOnlyRoot} is read-only in the namespace sandbox; use ${opt("sandbox", "container")} for this task`,
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

/** Whether the trusted gateway relay can carry this sandbox's calls (relay.ts): host root, a gateway, the tools. */
async function relayedHere(spec: SandboxSpec, setup: ToolSetup): Promise<boolean> {
  if (!spec.hostService || !setup.identity.hostRoot) return false;
  return (await loopbackUnavailableReason()) === null;
}
