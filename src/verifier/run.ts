// Upstream's verifier contract: the verifier code enters the sandbox only after the agent has
// finished and its processes are gone; /logs/verifier is emptied first; the test runs as root
// with the task's timeout; only the reward files decide the score.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { CategorizedError } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import type { VerifierErrorCategory } from "../schemas/outcome.js";
import type { RewardRule } from "../schemas/result.js";
import type { Task } from "../task/types.js";
import {
  HARDENING_OFF,
  type HardeningRecord,
  hardenForVerifier,
  verifierEnv,
  writeHardeningRecord,
} from "./harden.js";
import { type RewardMap, resolveReward } from "./reward.js";
import type { VerifierSnapshot } from "./snapshot.js";

export interface VerifierOutcome {
  rewards: RewardMap | null;
  /** Which rule made the scalar `reward` (null when unscored). */
  rule: z.infer<typeof RewardRule> | null;
  error: { category: VerifierErrorCategory; message: string } | null;
  exitCode: number | null;
  /** The last non-empty line the test printed (shown next to the reward). */
  lastLine: string | null;
}

/** What one verifier run uploads and runs; a step of a multi-step task has its own. */
export interface VerifierRun {
  /** Host folders uploaded to the verifier mount in order (a later one overrides same-named files). */
  uploads: string[];
  timeoutSec: number;
  env: Record<string, string>;
  /** Where /logs/verifier is copied to on the host. */
  outDir: string;
  /**
   * A step of a multi-step task: the mount emptied first (a later step must not see an earlier
   * step's tests), and the mount and /logs/verifier emptied after (the next agent must not read them).
   */
  clearMount: boolean;
  /**
   * Hardening before the test (verifier/harden.ts; it also makes the mount fresh), or "off"
   * (recorded so); absent: neither run nor recorded.
   */
  hardening?:
    | {
        snapshot: VerifierSnapshot;
        cleanupConftests: boolean;
        restoreBuildFiles?: boolean;
        /** Default: when the agent is root; false in a sandbox the agent never ran in. */
        killUnknownProcesses?: boolean;
      }
    | "off";
}

/** The one-step task's verifier run: its tests folder, its timeout and env, into <rollout>/verifier. */
export function taskVerifierRun(task: Task, rolloutDir: string): VerifierRun {
  const { timeoutSec, env } = task.config.verifier;
  return {
    uploads: [task.verifierDir],
    timeoutSec,
    env,
    outDir: path.join(rolloutDir, "verifier"),
    clearMount: false,
  };
}

export async function runVerifier(
  sandbox: Sandbox,
  task: Task,
  rolloutDir: string,
  run: VerifierRun = taskVerifierRun(task, rolloutDir),
): Promise<VerifierOutcome> {
  await sandbox.killAgentProcesses();
  await sandbox.prepareVerifier?.();
  const mount = task.verifierMount;
  const hardening = run.hardening;
  let record: HardeningRecord | typeof HARDENING_OFF | null = null;
  if (hardening && hardening !== "off") {
    try {
      record = await hardenForVerifier(sandbox, hardening.snapshot, {
        mount,
        cleanupConftests: hardening.cleanupConftests,
        restoreBuildFiles: hardening.restoreBuildFiles ?? true,
        timeoutSec: run.timeoutSec,
        ...(hardening.killUnknownProcesses !== undefined
          ? { killUnknownProcesses: hardening.killUnknownProcesses }
          : {}),
      });
    } catch (err) {
      // Past its time only when the agent filled the workspace: the verifier's timeout, which the
      // task's controls then attribute (rollout/verify.ts), not an exception that reads as ours.
      if (err instanceof CategorizedError && err.category === "verifier_timeout")
        return {
          rewards: null,
          rule: null,
          error: { category: "verifier_timeout", message: err.message },
          exitCode: null,
          lastLine: null,
        };
      throw err;
    }
  } else if (hardening === "off") record = HARDENING_OFF;
  if (record) await writeHardeningRecord(run.outDir, record);
  if (run.clearMount && record?.hardening !== "on")
    await sandbox.exec(`rm -rf -- ${mount} && mkdir -p ${mount}`, { user: "root" });
  for (const dir of run.uploads) await sandbox.upload(dir, mount);
  const { timeoutSec } = run;
  const env = verifierEnv(record?.hardening === "on" ? record : null, run.env);
  const script = `${mount}/${task.testScript}`;
  // Emptying /logs/verifier and running the test in one exec keeps a stale reward from counting.
  // Builtins only when the folder is already empty (the common case): no process spent on it.
  const command = [
    "shopt -s nullglob dotglob",
    "stale=(/logs/verifier/*); [[ -n $stale ]] && rm -rf -- /logs/verifier/*",
    "[[ -d /logs/verifier ]] || mkdir -p -m 777 /logs/verifier",
    "shopt -u nullglob dotglob",
    `bash ${script} > /logs/verifier/test-stdout.txt 2>&1`,
  ].join("\n");
  const done = await sandbox.exec(command, { user: "root", timeoutSec, env });
  const verifierDir = run.outDir;
  await sandbox.download("/logs/verifier", verifierDir);
  // A step's tests (the shared ones too) and its verifier's files must not stay for the next step's
  // agent to read: both emptied once they are on the host.
  if (run.clearMount)
    await sandbox.exec(
      `rm -rf -- ${mount} /logs/verifier/* /logs/verifier/.[!.]* && mkdir -p -m 755 -- ${mount}`,
      {
        user: "root",
        cwd: "/",
      },
    );
  // Ours, whatever the test left under the same name in /logs/verifier.
  if (record) await writeHardeningRecord(run.outDir, record);
  const files = await readRewardFiles(verifierDir);
  const lastLine = lastLineOf(files.stdout);
  const base = { exitCode: done.exitCode, lastLine, rule: null };
  if (done.timedOut) {
    return {
      ...base,
      rewards: null,
      error: { category: "verifier_timeout", message: `verifier timed out after ${timeoutSec}s` },
    };
  }
  const verdict = resolveReward(files, task.config.verifier.rewardRange);
  if (verdict === null) {
    const message = `verifier exited with rc=${done.exitCode}; no reward file found in /logs/verifier (write reward.txt or reward.json)`;
    return { ...base, rewards: null, error: { category: "verifier_failure", message } };
  }
  if (!verdict.ok)
    return { ...base, rewards: null, error: { category: "verifier_failure", message: verdict.message } };
  return { ...base, rewards: verdict.rewards, rule: verdict.rule, error: null };
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch {
    return undefined;
  }
}

async function readRewardFiles(dir: string) {
  const [json, txt, stdout] = await Promise.all([
    readIfExists(path.join(dir, "reward.json")),
    readIfExists(path.join(dir, "reward.txt")),
    readIfExists(path.join(dir, "test-stdout.txt")),
  ]);
  return { json, txt, stdout };
}

function lastLineOf(text: string | undefined): string | null {
  if (!text) return null;
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  return lines.at(-1)?.slice(0, 300) ?? null;
}
