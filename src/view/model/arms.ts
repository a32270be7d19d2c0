// The arms of an A/B run: `--skill-mode` (config.json `skill_mode`, written per rollout from the
// job's settings) or the policy version (the policy_version group key). config.json is read only when
// the A/B page is asked for, and remembered per rollout until its folder changes.
import path from "node:path";
import { policyVersionKey } from "../../jobs-dir/groups/groups.js";
import type { Rollout } from "../../jobs-dir/index.js";
import { CONFIG, readObject } from "../../jobs-dir/index.js";
import { mapLimit } from "../../util/limit.js";
import type { RunIndex } from "./run-index.js";

export type ArmBy = "skill_mode" | "policy_version";
export const ARM_BYS: readonly ArmBy[] = ["skill_mode", "policy_version"];

const skillCache = new WeakMap<RunIndex, Map<string, { mtime: number; mode: string | null }>>();

async function skillModes(index: RunIndex, rs: Rollout[]): Promise<Map<string, string | null>> {
  let cache = skillCache.get(index);
  if (!cache) {
    cache = new Map();
    skillCache.set(index, cache);
  }
  const c = cache;
  const out = new Map<string, string | null>();
  await mapLimit(rs, 32, async (r) => {
    const hit = c.get(r.relPath);
    if (hit && hit.mtime === r.mtimeMs) return void out.set(r.relPath, hit.mode);
    const config = await readObject(path.join(r.dir, CONFIG));
    const mode = typeof config?.skill_mode === "string" ? config.skill_mode : null;
    c.set(r.relPath, { mtime: r.mtimeMs, mode });
    out.set(r.relPath, mode);
  });
  return out;
}

/** The live rollouts by arm value (null: the run did not record one). */
export async function armsOf(index: RunIndex, by: ArmBy): Promise<Map<string | null, Rollout[]>> {
  const live = index.live();
  const values =
    by === "skill_mode"
      ? await skillModes(index, live)
      : new Map(live.map((r) => [r.relPath, policyVersionKey(r)]));
  const arms = new Map<string | null, Rollout[]>();
  for (const r of live) {
    const v = values.get(r.relPath) ?? null;
    const list = arms.get(v);
    if (list) list.push(r);
    else arms.set(v, [r]);
  }
  return arms;
}
