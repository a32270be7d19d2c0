// A run killed with SIGKILL cannot remove its sandboxes' scratch roots. Each root names its owner
// (pid and host: meta/owner.json, which scratch.ts writes); the next run on this host removes those
// whose owner is gone, with the disk and cgroups they name (limits.ts).
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pidAlive } from "../../util/process.js";
import { loopDeviceOf } from "./disk.js";
import { releaseRecorded } from "./limits.js";
import { OWNER_FILE, removeTree } from "./scratch.js";

const reaped = new Set<string>();

/** Remove orphaned scratch roots under `parent`, once per process and parent. Returns how many. */
export async function reapOrphanScratch(parent: string): Promise<number> {
  if (reaped.has(parent)) return 0;
  reaped.add(parent);
  let removed = 0;
  for (const name of await fs.readdir(parent).catch(() => [] as string[])) {
    const dir = path.join(parent, name);
    let owner: { pid?: unknown; host?: unknown };
    try {
      owner = JSON.parse(await fs.readFile(path.join(dir, "meta", OWNER_FILE), "utf8"));
    } catch {
      // Being created right now, or not ours to judge; but a disk still mounted there outlived
      // its files (a reaper without limits.ts removed them), and nobody mounts before owner.json.
      if ((await loopDeviceOf(path.join(dir, "fs"))) !== null) {
        await releaseRecorded(dir).catch(() => undefined);
        await removeTree(dir).catch(() => undefined);
        removed++;
      }
      continue;
    }
    if (owner.host !== os.hostname() || typeof owner.pid !== "number" || pidAlive(owner.pid)) continue;
    // Its disk and cgroups first: the tree lies on that disk.
    await releaseRecorded(dir).catch(() => undefined);
    await removeTree(dir).catch(() => undefined);
    removed++;
  }
  return removed;
}
