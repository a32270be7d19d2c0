// A rollout's config.json, read: the settings it ran with. Folders written before issue 16 held
// camelCase keys in the policy record; they read as today's (schemas/rollout-config.ts).
import { promises as fs } from "node:fs";
import path from "node:path";
import { DataError } from "../errors.js";
import { RolloutConfig } from "../schemas/rollout-config.js";
import { CONFIG } from "./layout.js";

/** The rollout's config.json, or null when it has none (not started, or another layout's folder). */
export async function readRolloutConfig(rolloutDir: string): Promise<RolloutConfig | null> {
  const file = path.join(rolloutDir, CONFIG);
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new DataError(
      `${file}: not valid JSON; the rollout's config.json is written whole, so the file was damaged`,
    );
  }
  const parsed = RolloutConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "the file";
    throw new DataError(`${file}: not a BenchFlow config.json (${where}: ${issue?.message ?? "invalid"})`);
  }
  return parsed.data;
}
