// `bench doctor`'s SLURM part: whether --executor slurm can run from here. Each check really runs
// what it names (sinfo, an srun on every node, the jobs-folder marker), as the sandbox checks do.
import { promises as fs } from "node:fs";
import path from "node:path";
import { opt } from "../../options.js";
import type { DoctorCheck } from "../../sandbox/doctor.js";
import { slurm } from "./commands.js";
import { checkNodesSeeJobsDir, type SlurmSettings } from "./executor.js";

export interface SlurmDoctor {
  checks: DoctorCheck[];
  /** null when --executor slurm works from here (for this jobs folder), else why not. */
  unusable: string | null;
}

export async function slurmDoctor(jobsDir: string, s: SlurmSettings): Promise<SlurmDoctor> {
  const checks: DoctorCheck[] = [];
  const fail = (name: string, detail: string, fix: string): SlurmDoctor => {
    checks.push({ name, ok: false, detail, fix });
    return { checks, unusable: detail };
  };
  let info: Awaited<ReturnType<typeof slurm>>;
  try {
    info = await slurm("sinfo", ["-h", "-N", "-o", "%N %P %t"]);
  } catch {
    return fail(
      "slurm (sinfo)",
      "sinfo is not installed here",
      "run bench on a SLURM login node, or scripts/setup-slurm.sh (as root) for a local cluster",
    );
  }
  if (info.code !== 0)
    return fail(
      "slurm (sinfo)",
      info.stderr.trim() || `exit ${info.code}`,
      "check that slurmctld runs and answers",
    );
  const nodes = info.stdout.trim().split("\n").filter(Boolean);
  checks.push({ name: "slurm (sinfo)", ok: true, detail: `${nodes.length} node(s): ${nodes.join(", ")}` });
  const dir = path.resolve(jobsDir);
  if (!(await fs.stat(dir).catch(() => null))?.isDirectory())
    return fail(
      "slurm jobs folder",
      `${dir} does not exist`,
      `pass ${opt("jobsDir")} with the folder bench run will write to, on the filesystem the nodes share`,
    );
  try {
    const seen = await checkNodesSeeJobsDir(dir, s);
    checks.push({
      name: "slurm srun + jobs folder",
      ok: true,
      detail: `an srun on ${seen.join(", ")} saw ${dir} and this BenchFlow`,
    });
    return { checks, unusable: null };
  } catch (err) {
    return fail(
      "slurm srun + jobs folder",
      (err as Error).message,
      "see the message; docs/run-on-a-cluster.md",
    );
  }
}
