// One poller for every SLURM job of the run: a single `squeue -j id,id,...` per interval however
// many rollouts wait, so hundreds of rollouts do not each ask slurmctld several times a second. A job
// squeue no longer lists, or lists as ended, gets one `scontrol show job` for its last state.
import { setTimeout as sleep } from "node:timers/promises";
import { hasEnded, showJob, slurm } from "./commands.js";

export interface JobEnd {
  state: string;
  node: string | null;
  reason: string;
}

interface Waiter {
  node: string | null;
  resolve(end: JobEnd): void;
}

const known = (v: string | undefined): string | null => (v && v !== "(null)" && v !== "None" ? v : null);

export class JobWatcher {
  private readonly waiting = new Map<string, Waiter>();
  private running = false;

  constructor(
    private pollMs: number,
    /** The interval once the run only waits for its last jobs to end (hurry). */
    private readonly hurriedMs = 100,
  ) {}

  /** Stops asking about every job still waited on (their waits never resolve). */
  forget(): void {
    this.waiting.clear();
  }

  /** Ask more often from now on: nothing is submitted any more, a few jobs are ending. */
  hurry(): void {
    this.pollMs = Math.min(this.pollMs, this.hurriedMs);
  }

  /** Resolves once SLURM says the job has ended (or has forgotten it). */
  wait(id: string): Promise<JobEnd> {
    return new Promise((resolve) => {
      this.waiting.set(id, { node: null, resolve });
      if (!this.running) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.size > 0) {
        await sleep(this.pollMs);
        await this.poll();
      }
    } finally {
      this.running = false;
    }
  }

  private async poll(): Promise<void> {
    const ids = [...this.waiting.keys()];
    const listed = await slurm("squeue", ["-h", "-t", "all", "-j", ids.join(","), "-o", "%i|%T|%N|%r"]);
    // squeue answers "Invalid job id" when every id it was given is gone: an answer, not an outage.
    const answered = listed.code === 0 || /invalid job id/i.test(listed.stderr);
    const rows = new Map<string, { state: string; node: string | null }>();
    if (listed.code === 0)
      for (const line of listed.stdout.split("\n")) {
        const [id, state, node] = line.trim().split("|");
        if (id && state) rows.set(id, { state, node: known(node) });
      }
    for (const id of ids) {
      const w = this.waiting.get(id) as Waiter;
      const row = rows.get(id);
      if (row?.node) w.node = row.node;
      if (row && !hasEnded(row.state)) continue;
      // Ended, or not listed (purged, or squeue failed): scontrol has the last word while it knows the job.
      const info = await showJob(id);
      const state = (info?.JobState ?? row?.state ?? "UNKNOWN").split("+")[0] as string;
      if (info && !hasEnded(state)) continue;
      if (!info && !answered) continue; // SLURM did not answer: ask again next time
      this.waiting.delete(id);
      w.resolve({
        state,
        node: known(info?.BatchHost) ?? known(info?.NodeList) ?? w.node,
        reason: known(info?.Reason) ?? "",
      });
    }
  }
}
