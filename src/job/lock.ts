// `.evaluation.lock` says a process is running the job. A lock whose process is gone (same
// host) is taken over; a live one refuses the second run, naming the holder.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { UserInputError } from "../errors.js";
import { LOCK } from "../jobs-dir/layout.js";
import { opt } from "../options.js";
import { EvaluationLock } from "../schemas/result.js";
import { pidAlive } from "../util/process.js";

async function readLock(file: string): Promise<EvaluationLock | null> {
  try {
    return EvaluationLock.parse(JSON.parse(await fs.readFile(file, "utf8")));
  } catch {
    return null;
  }
}

export interface JobLock {
  release(): Promise<void>;
}

export async function acquireLock(jobDir: string): Promise<JobLock> {
  const file = path.join(jobDir, LOCK);
  const mine: EvaluationLock = {
    pid: process.pid,
    host: os.hostname(),
    started_at: new Date().toISOString(),
  };
  const body = `${JSON.stringify(mine)}\n`;
  try {
    await fs.writeFile(file, body, { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const held = await readLock(file);
    if (held && !(held.host === mine.host && !pidAlive(held.pid)) && held.pid !== process.pid) {
      throw new UserInputError(
        `job ${jobDir} is locked by pid ${held.pid} on host ${held.host} (since ${held.started_at}): wait for that run to finish, stop it, or use another ${opt("jobName")}`,
      );
    }
    // The holder is gone (or the file is unreadable): take the lock over.
    await fs.writeFile(file, body);
  }
  return {
    async release() {
      const held = await readLock(file);
      if (held?.pid === process.pid) await fs.rm(file, { force: true });
    },
  };
}
