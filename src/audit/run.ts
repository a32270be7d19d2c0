// Runs the audit: for each task, a copy whose reference solution is an exploit, one per applicable
// exploit, and one whose solution does nothing (the nop), all run with the oracle agent through the
// library's own Evaluation, in the sandbox the user picked and with the hardening as configured. The
// copies differ from the task only in their solution, so the verifier, its image and its limits are
// the task's own.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Evaluation, type EvaluationEvent } from "../job/evaluation.js";
import type { SandboxChoice } from "../sandbox/select.js";
import type { RolloutResult } from "../schemas/result.js";
import { discoverTasks } from "../task/discover.js";
import { loadTasks } from "../task/load.js";
import type { Task } from "../task/types.js";
import type { VerifierEnvironmentMode } from "../task/verifier-mode.js";
import { copyTree } from "../util/copy-tree.js";
import { agentScript, EXPLOITS, type Exploit, exploitsFor } from "./exploits.js";
import { readFacts, type TaskFacts } from "./facts.js";
import type { AuditedExploit, AuditedTask, AuditReport } from "./report.js";

export interface AuditSettings {
  /** Task folders, or folders of tasks (each audited once). */
  tasks: string[];
  sandbox?: SandboxChoice;
  /** Rollouts at once (the exploits of a task, and of several tasks, run side by side). Default 4. */
  concurrency?: number;
  verifierHardening?: "on" | "off";
  verifierEnvironmentMode?: VerifierEnvironmentMode | null;
  /** Where the audit's rollouts are written; default a temporary folder, removed at the end. */
  jobsDir?: string | null;
  onEvent?: (event: EvaluationEvent) => void;
}

const NOP = "nop";
const NOP_SCRIPT = "#!/bin/bash\n# bench tasks audit: the nop (does nothing).\nexit 0\n";

/** One copy of a task: which task, which exploit (null: the nop). */
interface Copy {
  task: Task;
  exploit: Exploit | null;
}

/** The solution scripts of a copy: the task's own (made when it has none) and each step's. */
function solveScripts(task: Task): string[] {
  const own = task.solutionDir
    ? path.join(path.relative(task.dir, task.solutionDir), task.solveScript ?? "solve.sh")
    : path.join(task.layout === "native" ? "oracle" : "solution", "solve.sh");
  const steps = (task.steps ?? []).flatMap((s) =>
    s.solutionDir ? [path.join(path.relative(task.dir, s.solutionDir), s.solveScript ?? "solve.sh")] : [],
  );
  return [...new Set([own, ...steps])];
}

async function writeCopy(dest: string, task: Task, script: string): Promise<void> {
  await copyTree(task.dir, dest);
  for (const rel of solveScripts(task)) {
    const file = path.join(dest, rel);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, script, { mode: 0o755 });
  }
}

/** Writes every copy into `dir` and returns them by folder name (the rollouts' task_name). */
async function writeCopies(
  dir: string,
  tasks: Task[],
  facts: Map<Task, TaskFacts>,
): Promise<Map<string, Copy>> {
  const copies = new Map<string, Copy>();
  const used = new Set<string>();
  for (const task of tasks) {
    let base = task.name;
    for (let n = 2; used.has(base); n++) base = `${task.name}-${n}`;
    used.add(base);
    const f = facts.get(task) as TaskFacts;
    const runs: Array<Exploit | null> = [null, ...exploitsFor(f)];
    for (const exploit of runs) {
      const name = `${base}--audit-${exploit?.name ?? NOP}`;
      await writeCopy(path.join(dir, name), task, exploit ? agentScript(exploit, f) : NOP_SCRIPT);
      copies.set(name, { task, exploit });
    }
  }
  return copies;
}

function rewardOf(r: RolloutResult | undefined): number | null {
  const reward = r?.rewards?.reward;
  return typeof reward === "number" ? reward : null;
}

function errorOf(r: RolloutResult | undefined): string | null {
  if (!r) return "no result";
  return r.verifier_error ?? r.error ?? null;
}

function auditedTask(
  task: Task,
  facts: TaskFacts,
  results: Map<string, RolloutResult>,
  copies: Map<string, Copy>,
): AuditedTask {
  const mine = [...copies].filter(([, c]) => c.task === task);
  const nopName = mine.find(([, c]) => c.exploit === null)?.[0] ?? "";
  const nop = results.get(nopName);
  const nopReward = rewardOf(nop);
  const exploits: AuditedExploit[] = mine.flatMap(([name, c]) => {
    if (!c.exploit) return [];
    const r = results.get(name);
    const reward = rewardOf(r);
    return [
      {
        name: c.exploit.name,
        kind: c.exploit.kind,
        hole: c.exploit.hole,
        reward,
        error: errorOf(r),
        accepted: reward !== null && reward > (nopReward ?? 0),
      },
    ];
  });
  const ran = new Set(exploitsFor(facts).map((e) => e.name));
  return {
    task: task.name,
    path: task.dir,
    nop_reward: nopReward,
    nop_error: errorOf(nop),
    exploits,
    not_applicable: EXPLOITS.filter((e) => !ran.has(e.name)).map((e) => e.name),
    accepted: exploits.filter((e) => e.accepted).map((e) => e.name),
  };
}

/** Audits every task under `settings.tasks`; a path that is not a task (or a task that does not load) is a UserInputError. */
export async function auditTasks(settings: AuditSettings): Promise<AuditReport> {
  const dirs: string[] = [];
  for (const p of settings.tasks) dirs.push(...(await discoverTasks(p, {})));
  const tasks = await loadTasks([...new Set(dirs)]);
  const facts = new Map<Task, TaskFacts>();
  for (const task of tasks) facts.set(task, await readFacts(task));
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bench-audit-"));
  try {
    const copiesDir = path.join(scratch, "tasks");
    const copies = await writeCopies(copiesDir, tasks, facts);
    const evaluation = new Evaluation({
      tasks: copiesDir,
      agent: "oracle",
      concurrency: settings.concurrency ?? 4,
      jobsDir: settings.jobsDir ?? path.join(scratch, "jobs"),
      retryAttempts: 0,
      ...(settings.sandbox ? { sandbox: settings.sandbox } : {}),
      ...(settings.verifierHardening ? { verifierHardening: settings.verifierHardening } : {}),
      ...(settings.verifierEnvironmentMode
        ? { verifierEnvironmentMode: settings.verifierEnvironmentMode }
        : {}),
      ...(settings.onEvent ? { onEvent: settings.onEvent } : {}),
    });
    const plan = await evaluation.plan();
    const outcome = await evaluation.run();
    const results = new Map(outcome.results.map((r) => [r.task_name, r]));
    const audited = tasks.map((t) => auditedTask(t, facts.get(t) as TaskFacts, results, copies));
    return {
      schema_version: 1,
      sandbox: plan.backend.kind,
      verifier_hardening: settings.verifierHardening ?? "on",
      tasks: audited,
      accepted: audited.reduce((n, t) => n + t.accepted.length, 0),
    };
  } finally {
    await fs.rm(scratch, { recursive: true, force: true }).catch(() => {});
  }
}
