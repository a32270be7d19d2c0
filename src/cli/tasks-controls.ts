// `bench tasks check --controls`: each task's controls (oracle and nop, twice each, on clean sandboxes)
// run ahead of time, as a run would on the task's first verifier failure; the verdict is cached in the
// jobs folder, where later runs find it. A verifier that fails on a clean run is a problem: its
// failures are masked in every run, and a trainer learns nothing from them.
import path from "node:path";
import { messageOf } from "../errors.js";
import { type ControlsReport, checkControls, controlsWarning } from "../rollout/controls.js";
import { type SandboxChoice, selectBackend } from "../sandbox/select.js";
import { taskDigest } from "../task/digest.js";
import { loadTask } from "../task/load.js";
import { sandboxChoice } from "./run.js";

export interface ControlsOptions {
  sandbox?: SandboxChoice;
  jobsDir?: string;
  verifierHardening?: "on" | "off";
}

/** Checks the controls of each task folder; false when one has a problem. */
export async function checkTasksControls(dirs: string[], o: ControlsOptions): Promise<boolean> {
  const { backend } = await selectBackend(sandboxChoice(o.sandbox));
  const jobsDir = path.resolve(o.jobsDir ?? "jobs");
  const run = { backend, verifierHardening: o.verifierHardening ?? "on", record: {} } as const;
  const stop = new AbortController();
  let ok = true;
  for (const dir of dirs) {
    try {
      const task = await loadTask(dir);
      const report = await checkControls(task, await taskDigest(task.dir), run, jobsDir, stop.signal);
      process.stdout.write(`${controlsLine(report)}\n`);
      const words = controlsWarning(report);
      if (report.verdict === "crashes_on_clean_run") {
        process.stdout.write(`${report.task}: problem: ${words}\n`);
        ok = false;
      } else if (words) process.stdout.write(`${report.task}: warning: ${words}\n`);
    } catch (err) {
      process.stdout.write(`${dir}: problem: its controls could not run: ${messageOf(err)}\n`);
      ok = false;
    }
  }
  return ok;
}

/** `TASK: controls on the namespace sandbox: sound (oracle 1.0 1.0, nop 0.0 0.0)`: the verdict and every control's reward. */
export function controlsLine(r: ControlsReport): string {
  const byAgent = new Map<string, string[]>();
  for (const run of r.runs) {
    const shown =
      run.reward === null
        ? (run.verifier_error_category ?? run.error_category ?? "none")
        : run.reward.toFixed(1);
    byAgent.set(run.agent, [...(byAgent.get(run.agent) ?? []), shown]);
  }
  const detail = [...byAgent].map(([agent, rewards]) => `${agent} ${rewards.join(" ")}`).join(", ");
  return `${r.task}: controls on the ${r.sandbox} sandbox: ${r.verdict}${detail ? ` (${detail})` : ""}`;
}
