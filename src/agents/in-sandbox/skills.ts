// Skills: folders holding a SKILL.md, from the task's environment/skills/ and from --skills-dir,
// placed where each agent looks for them. --skill-mode no-skill leaves them out (the A/B control).
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import type { Task } from "../../task/types.js";

export type SkillMode = "with-skill" | "no-skill";
export const SKILL_MODES: readonly SkillMode[] = ["with-skill", "no-skill"];

export interface SkillOptions {
  mode?: SkillMode;
  /** --skills-dir: a folder of skill folders (or one skill folder). */
  dir?: string | null;
}

export interface SkillFolder {
  name: string;
  hostPath: string;
}

export function parseSkillMode(value: string): SkillMode {
  if ((SKILL_MODES as readonly string[]).includes(value)) return value as SkillMode;
  throw new UserInputError(`${opt("skillMode")} ${JSON.stringify(value)}: use with-skill or no-skill`);
}

async function isSkill(dir: string): Promise<boolean> {
  return (await fs.stat(path.join(dir, "SKILL.md")).catch(() => null))?.isFile() === true;
}

/** The skill folders directly in `root` (or root itself when it is one). */
async function skillFoldersIn(root: string): Promise<SkillFolder[]> {
  if (await isSkill(root)) return [{ name: path.basename(root), hostPath: root }];
  const entries = await fs.readdir(root, { withFileTypes: true }).catch(() => []);
  const found: SkillFolder[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(root, e.name);
    if (e.isDirectory() && (await isSkill(p))) found.push({ name: e.name, hostPath: p });
  }
  return found;
}

/** Skills for this task under these options; a --skills-dir skill wins over the task's of the same name. */
export async function skillsFor(task: Task, opts: SkillOptions): Promise<SkillFolder[]> {
  if (opts.mode === "no-skill") return [];
  const byName = new Map<string, SkillFolder>();
  for (const s of await skillFoldersIn(path.join(task.environmentDir, "skills"))) byName.set(s.name, s);
  if (opts.dir) {
    const dir = path.resolve(opts.dir);
    if (!(await fs.stat(dir).catch(() => null))?.isDirectory()) {
      throw new UserInputError(
        `${opt("skillsDir")} ${opts.dir}: not a folder; pass a folder of skill folders (each with a SKILL.md)`,
      );
    }
    for (const s of await skillFoldersIn(dir)) byName.set(s.name, s);
  }
  return [...byName.values()];
}
