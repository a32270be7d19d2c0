// The local cluster of scripts/setup-slurm.sh, as the SLURM tests see it: n1 and n2 (partition main)
// see the shared root, n3 (partition blind) does not. Tests skip, saying why, where it is not up;
// in CI (.ci/run sets it up) test/slurm-executor.test.ts fails instead.
import { execFileSync } from "node:child_process";

export const SHARED_ROOT = process.env.BENCHFLOW_SLURM_SHARED_ROOT ?? "/var/lib/benchflow-slurm/shared";

/** Why the local cluster cannot be used here, or null when n1, n2 and n3 answer. */
export function clusterMissing(): string | null {
  try {
    const nodes = execFileSync("sinfo", ["-h", "-N", "-o", "%N"], { encoding: "utf8", timeout: 30_000 });
    for (const n of ["n1", "n2", "n3"])
      if (!nodes.includes(n)) return `node ${n} is not in sinfo -N; run scripts/setup-slurm.sh (as root)`;
  } catch {
    return "sinfo is missing or slurmctld does not answer; run scripts/setup-slurm.sh (as root)";
  }
  return null;
}

/**
 * Jobs in the queue whose comment names this run's job name, with their state and node: in squeue's
 * default states (pending, running, completing), or in `states` (e.g. RUNNING).
 */
export function jobsOfRun(jobName: string, states?: string): { id: string; state: string; node: string }[] {
  const filter = states ? ["-t", states] : [];
  const out = execFileSync("squeue", ["-h", ...filter, "-o", "%i|%T|%N|%k"], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((l) => l.includes(`run=${jobName}:`))
    .map((l) => {
      const [id, state, node] = l.split("|");
      return { id: id as string, state: state as string, node: node as string };
    });
}

/** `bench run` of the oracle in the namespace sandbox under a fixed job name, quiet; `extra` adds flags. */
export function oracleRunArgs(
  tasks: string,
  jobsDir: string,
  jobName: string,
  extra: string[] = [],
): string[] {
  return [
    "run",
    tasks,
    "-a",
    "oracle",
    "--sandbox",
    "namespace",
    "--jobs-dir",
    jobsDir,
    "--job-name",
    jobName,
    "-q",
    ...extra,
  ];
}
