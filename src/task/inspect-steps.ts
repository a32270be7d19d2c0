// The files of a multi-step task (Harbor's layout): steps/<name>/{instruction.md, tests/, solution/,
// workdir/}, with the top-level tests/ as shared helpers and fallback test.sh, and the top-level
// solution/solve.sh as the oracle's fallback. Problems are collected like the rest of inspect.ts's.
import { promises as fs } from "node:fs";
import path from "node:path";
import { displayPath } from "./source.js";
import type { StepConfig, TaskStep } from "./types.js";

export interface StepsInspection {
  steps: TaskStep[];
  problems: string[];
  checkProblems: string[];
  warnings: string[];
}

const isDir = async (p: string) => (await fs.stat(p).catch(() => null))?.isDirectory() === true;
const isFile = async (p: string) => (await fs.stat(p).catch(() => null))?.isFile() === true;

export async function inspectSteps(dir: string, configs: StepConfig[]): Promise<StepsInspection> {
  const out: StepsInspection = { steps: [], problems: [], checkProblems: [], warnings: [] };
  const sharedTests = path.join(dir, "tests");
  const hasShared = await isDir(sharedTests);
  const sharedScript = hasShared && (await isFile(path.join(sharedTests, "test.sh")));
  const sharedSolution = path.join(dir, "solution");
  const sharedSolve = (await isFile(path.join(sharedSolution, "solve.sh"))) ? sharedSolution : null;
  if (await isFile(path.join(dir, "instruction.md")))
    out.warnings.push(
      `${displayPath(path.join(dir, "instruction.md"))} is not used: a multi-step task gives each step steps/<name>/instruction.md`,
    );
  for (const config of configs) {
    const stepDir = path.join(dir, "steps", config.name);
    const shown = displayPath(stepDir);
    if (!(await isDir(stepDir))) {
      out.problems.push(
        `${shown}/: missing; [[steps]] name = "${config.name}" needs this folder with instruction.md and tests/test.sh`,
      );
      continue;
    }
    const instruction = await fs.readFile(path.join(stepDir, "instruction.md"), "utf8").catch(() => null);
    if (instruction === null)
      out.problems.push(`${shown}/instruction.md: missing; write the step's prompt there`);
    else if (instruction.trim() === "")
      out.problems.push(
        `${shown}/instruction.md is empty; write the instruction the agent gets in this step`,
      );
    const ownTests = path.join(stepDir, "tests");
    const hasOwn = await isDir(ownTests);
    if (!(hasOwn && (await isFile(path.join(ownTests, "test.sh")))) && !sharedScript) {
      out.problems.push(
        `${shown}/tests/test.sh: missing, and there is no shared tests/test.sh; add one of them (it writes /logs/verifier/reward.txt)`,
      );
    }
    const ownSolution = path.join(stepDir, "solution");
    const solutionDir = (await isFile(path.join(ownSolution, "solve.sh"))) ? ownSolution : sharedSolve;
    if (!solutionDir) {
      out.checkProblems.push(
        `${shown}/solution/solve.sh: missing, and there is no solution/solve.sh to fall back on`,
      );
      out.warnings.push(`step ${config.name} has no solution, so the oracle agent cannot run this task`);
    }
    const workdir = path.join(stepDir, "workdir");
    out.steps.push({
      ...config,
      instruction: instruction?.trim() ?? "",
      testsDirs: [...(hasShared ? [sharedTests] : []), ...(hasOwn ? [ownTests] : [])],
      solutionDir,
      solveScript: solutionDir ? "solve.sh" : null,
      workdirDir: (await isDir(workdir)) ? workdir : null,
    });
  }
  return out;
}
