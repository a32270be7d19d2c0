// Jobs folders that lie under a system folder the namespace sandbox shows read-only (/usr/local/...)
// are remembered on the host, so that every later sandbox hides them too, not only the sandboxes of
// the run that wrote them: an agent must never read an earlier run's rollouts (its answers) there.
// A small list, one absolute path a line; a folder since removed is skipped where it is read and
// dropped when the list is next written.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { envVar } from "../../env.js";
import { writeFileAtomic } from "../../util/fs.js";

const written = new Set<string>();

/** $XDG_STATE_HOME/benchflow (else ~/.local/state/benchflow): kept across reboots, unlike /tmp. */
export function seenJobsFile(): string {
  const state = envVar("XDG_STATE_HOME") || path.join(os.homedir(), ".local", "state");
  return path.join(state, "benchflow", "jobs-folders-in-system-paths");
}

/** Adds folders to the list (once per process each; a failure to write only loses the memory). */
export async function rememberJobsFolders(folders: string[]): Promise<void> {
  const fresh = folders.filter((f) => !written.has(f));
  if (fresh.length === 0) return;
  for (const f of fresh) written.add(f);
  const file = seenJobsFile();
  try {
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    // Rewritten whole, without the folders since removed, so the list (read by every sandbox) stays short.
    const kept = await existing(await seenJobsFolders());
    const all = [...new Set([...kept, ...fresh])];
    await writeFileAtomic(file, all.map((f) => `${f}\n`).join(""));
  } catch {
    for (const f of fresh) written.delete(f);
  }
}

async function existing(folders: string[]): Promise<string[]> {
  const found = await Promise.all(
    folders.map((f) =>
      fs.stat(f).then(
        (st) => st.isDirectory(),
        () => false,
      ),
    ),
  );
  return folders.filter((_, i) => found[i]);
}

/** Every folder remembered so far (absolute paths only; what no longer exists is the caller's to skip). */
export async function seenJobsFolders(): Promise<string[]> {
  const text = await fs.readFile(seenJobsFile(), "utf8").catch(() => "");
  return [...new Set(text.split("\n").filter((l) => l.startsWith("/")))];
}
