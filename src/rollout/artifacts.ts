// Collects the task's artifacts after the agent: each source is copied out of the sandbox into the
// rollout's artifacts/ folder, and artifacts/manifest.json (writeArtifactManifest) says what was found. Best effort, as in
// Harbor: a missing artifact is recorded, never a failure of the rollout.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Sandbox } from "../sandbox/types.js";
import type { ArtifactSpec } from "../task/artifacts.js";
import { matchesGlob } from "../task/glob.js";
import { writeJsonAtomic } from "../util/fs.js";

export interface ArtifactRecord {
  source: string;
  destination: string;
  status: "collected" | "missing" | "failed";
  error?: string;
}

export async function collectArtifacts(
  sandbox: Sandbox,
  specs: ArtifactSpec[],
  rolloutDir: string,
): Promise<ArtifactRecord[]> {
  if (specs.length === 0) return [];
  const root = path.join(rolloutDir, "artifacts");
  const records: ArtifactRecord[] = [];
  for (const spec of specs) {
    const target = path.join(root, spec.destination);
    try {
      await sandbox.download(spec.source, target);
      const st = await fs.stat(target).catch(() => null);
      if (st === null) {
        records.push({ source: spec.source, destination: spec.destination, status: "missing" });
        continue;
      }
      if (st.isDirectory() && spec.exclude.length > 0) await prune(target, spec.exclude);
      records.push({ source: spec.source, destination: spec.destination, status: "collected" });
    } catch (err) {
      records.push({
        source: spec.source,
        destination: spec.destination,
        status: "failed",
        error: (err as Error).message,
      });
    }
  }
  return records;
}

/**
 * artifacts/manifest.json, written after everything else lands in artifacts/: the agent's own
 * /logs/artifacts is copied there too, and a manifest.json of its making must not stand for ours.
 */
export async function writeArtifactManifest(rolloutDir: string, records: ArtifactRecord[]): Promise<void> {
  if (records.length === 0) return;
  await writeJsonAtomic(path.join(rolloutDir, "artifacts", "manifest.json"), records);
}

async function prune(dir: string, exclude: string[]): Promise<void> {
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (exclude.some((g) => matchesGlob(e.name, g))) await fs.rm(full, { recursive: true, force: true });
    else if (e.isDirectory()) await prune(full, exclude);
  }
}
