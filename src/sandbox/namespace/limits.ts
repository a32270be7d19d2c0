// The task's limits for one namespace sandbox: processes and memory through a cgroup (rlimits where
// no cgroup can be made), storage through a disk of its own (disk.ts). What holds is recorded in
// `sandbox.limits`; what does not, in a warning. The resources are named in meta/resources.json so
// that a run killed with SIGKILL leaves nothing the next run's reaper cannot remove (reap.ts).
import { promises as fs } from "node:fs";
import path from "node:path";
import { opt } from "../../options.js";
import type { Task } from "../../task/types.js";
import { DEFAULT_PIDS_LIMIT, type LimitRecord, type SandboxLimits } from "../types.js";
import {
  type Cgroup,
  type CgroupLimits,
  cgroupDirsNamed,
  cgroupExceeded,
  joinCgroupArgv,
  makeCgroup,
  removeCgroup,
  removeCgroupDir,
} from "./cgroup.js";
import {
  diskFull,
  diskUnavailableReason,
  makeScratchDisk,
  removeScratchDisk,
  type ScratchDisk,
} from "./disk.js";

const RESOURCES_FILE = "resources.json";

interface Recorded {
  cgroups: string[];
  mountpoint: string | null;
}

export class SandboxResources {
  private verifierRuns = 0;

  private constructor(
    readonly limits: SandboxLimits,
    readonly warnings: string[],
    private readonly metaDir: string,
    private readonly cgroupLimits: CgroupLimits,
    private readonly name: string,
    private cgroup: Cgroup | null,
    private readonly disk: ScratchDisk | null,
    /** The rlimit fallback, put before each command: empty when the cgroup holds. */
    readonly commandPrefix: string,
  ) {}

  /** Mounts the disk over fsRoot (still empty) and makes the cgroup; call before anything is written there. */
  static async apply(
    task: Task,
    scratch: { dir: string; fsRoot: string; metaDir: string },
    pids = DEFAULT_PIDS_LIMIT,
  ): Promise<SandboxResources> {
    const { memoryMb, storageMb } = task.config.sandbox;
    const cgroupLimits: CgroupLimits = { pids, memoryBytes: memoryMb * 1024 * 1024 };
    const name = path.basename(scratch.dir);
    const warnings: string[] = [];
    const limits: SandboxLimits = {};
    const record: Recorded = { cgroups: [], mountpoint: null };
    const save = () => writeRecord(scratch.metaDir, record);

    const noDisk = await diskUnavailableReason();
    if (noDisk === null) record.mountpoint = scratch.fsRoot;
    await save(); // named before it exists: a crash halfway still gets it unmounted
    // The disk and the cgroup are independent: made at once.
    const [madeDisk, attempt] = await Promise.allSettled([
      noDisk === null ? makeScratchDisk(scratch.dir, scratch.fsRoot, storageMb) : null,
      makeCgroup(name, cgroupLimits),
    ]);
    if (madeDisk.status === "rejected") {
      if (attempt.status === "fulfilled" && attempt.value.cgroup)
        await removeCgroup(attempt.value.cgroup).catch(() => undefined);
      throw new Error(
        `the sandbox's ${storageMb} MB disk could not be made: ${(madeDisk.reason as Error).message}`,
      );
    }
    if (attempt.status === "rejected") throw attempt.reason;
    const disk = madeDisk.value;
    const cgroup = attempt.value;
    if (disk !== null) {
      limits.storage_mb = { requested: storageMb, applied: "filesystem" };
    } else {
      limits.storage_mb = { requested: storageMb, applied: `not_applied: ${noDisk}` };
      warnings.push(
        // No task name or size in it (config.json records both): one line per run (hostWarnings).
        `storage_mb is not applied in the namespace sandbox (${noDisk}): the agent can fill the host's disk; run as root or use ${opt("sandbox", "container")}`,
      );
    }

    let prefix = "";
    if (cgroup.cgroup !== null) {
      record.cgroups = cgroup.cgroup.dirs;
      await save();
      limits.pids = { requested: pids, applied: "cgroup" };
      limits.memory_mb = { requested: memoryMb, applied: "cgroup" };
    } else {
      // RLIMIT_NPROC counts the processes of the exec's user (per user namespace), RLIMIT_DATA
      // caps each process's heap and private mappings: a bound per process, not for the whole tree.
      prefix = `ulimit -u ${pids} -d ${memoryMb * 1024} || exit 125\n`;
      limits.pids = { requested: pids, applied: "rlimit" };
      limits.memory_mb = { requested: memoryMb, applied: "rlimit" };
      warnings.push(
        `no cgroup for the namespace sandbox (${cgroup.reason}): processes are capped by RLIMIT_NPROC (per user) and memory by RLIMIT_DATA (per process, not for all processes together)`,
      );
    }
    return new SandboxResources(
      limits,
      warnings,
      scratch.metaDir,
      cgroupLimits,
      name,
      cgroup.cgroup,
      disk,
      prefix,
    );
  }

  /** The tool's argv, joined to the cgroup of the current phase. */
  wrap(argv: string[]): string[] {
    return this.cgroup === null ? argv : joinCgroupArgv(this.cgroup, argv);
  }

  /**
   * After the agent: settle which limits it went past, and give the verifier a cgroup of its own
   * (nothing the agent spent counts against it). The disk keeps the verifier's reserve (disk.ts).
   */
  async prepareVerifier(): Promise<void> {
    // Called once per verifier run (a multi-step task has several); what was exceeded stays so.
    const settle = (record: LimitRecord | undefined, went: boolean) => {
      if (record) record.exceeded = (record.exceeded ?? false) || went;
    };
    if (this.cgroup !== null) {
      const went = await cgroupExceeded(this.cgroup);
      settle(this.limits.pids, went.pids);
      settle(this.limits.memory_mb, went.memory);
      this.verifierRuns++;
      const suffix = this.verifierRuns > 1 ? `-verifier-${this.verifierRuns}` : "-verifier";
      const fresh = await makeCgroup(`${this.name}${suffix}`, this.cgroupLimits);
      if (fresh.cgroup !== null) {
        const spent = this.cgroup;
        this.cgroup = fresh.cgroup;
        const mountpoint = this.disk?.mountpoint ?? null;
        await writeRecord(this.metaDir, { cgroups: [...spent.dirs, ...fresh.cgroup.dirs], mountpoint });
        // The agent's execs are over, so its cgroup is empty: removed now (stop() retries if not).
        const removed = await removeCgroup(spent).then(
          () => true,
          () => false,
        );
        if (removed) await writeRecord(this.metaDir, { cgroups: fresh.cgroup.dirs, mountpoint });
      } else {
        this.warnings.push(`the verifier shares the agent's cgroup: ${fresh.reason}`);
      }
    }
    if (this.disk !== null) settle(this.limits.storage_mb, await diskFull(this.disk));
  }

  /** Everything the sandbox held on the host, before its tree is removed. */
  async release(): Promise<void> {
    await releaseRecorded(path.dirname(this.metaDir));
  }
}

async function writeRecord(metaDir: string, record: Recorded): Promise<void> {
  const file = path.join(metaDir, RESOURCES_FILE);
  await fs.writeFile(`${file}.tmp`, JSON.stringify(record));
  await fs.rename(`${file}.tmp`, file);
}

/**
 * Removes the cgroups and the disk a scratch root names (its own, or one a dead run left). Only
 * paths of the shape we make are touched: cgroups under /sys/fs/cgroup/.../benchflow/, the disk at
 * <dir>/fs.
 */
export async function releaseRecorded(dir: string): Promise<void> {
  const fsRoot = path.join(dir, "fs");
  let record: Partial<Recorded>;
  try {
    record = JSON.parse(await fs.readFile(path.join(dir, "meta", RESOURCES_FILE), "utf8"));
  } catch {
    // No record: none was applied, or an older reaper removed the files but not the mount.
    record = { mountpoint: fsRoot, cgroups: await cgroupDirsNamed(path.basename(dir)) };
  }
  if (record.mountpoint === fsRoot) await removeScratchDisk(fsRoot);
  for (const cg of record.cgroups ?? []) {
    if (
      typeof cg === "string" &&
      cg.startsWith("/sys/fs/cgroup/") &&
      path.basename(path.dirname(cg)) === "benchflow"
    )
      await removeCgroupDir(cg).catch(() => undefined);
  }
}
