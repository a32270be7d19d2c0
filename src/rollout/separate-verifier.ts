// `[verifier] environment_mode = "separate"`: the test runs in a fresh sandbox made by the same
// backend from the task's image, which receives only the agent's declared output: the workspace
// (replacing the image's copy) and the artifacts (the task's `artifacts` at their source paths, and
// /logs/artifacts). Nothing else the agent did to its sandbox (system files a root agent rewrote,
// files planted in /tmp or a home folder, processes) reaches the verifier. In a one-step task the
// agent's sandbox has no further use once its output is out, so it is stopped before the verifier
// starts; in a multi-step task it is kept for the next step, and each step's verifier gets a fresh
// sandbox of its own.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CategorizedError, messageOf } from "../errors.js";
import { CUT_RECORD } from "../sandbox/copy-out.js";
import type { Sandbox } from "../sandbox/types.js";
import type { TimingInfo } from "../schemas/result.js";
import { phaseHasNetwork } from "../task/network.js";
import { copyTree } from "../util/copy-tree.js";
import type { VerifierOutcome } from "../verifier/run.js";
import { collectArtifacts } from "./artifacts.js";
import { readyEnvironment } from "./ready.js";
import type { RolloutState } from "./state.js";
import { type RolloutPlan, sayWarnings } from "./types.js";

/** Runs the verifier in a sandbox it is given (the caller adds what every verifier run gets, e.g. hardening). */
export type VerifierRunner = (sandbox: Sandbox) => Promise<VerifierOutcome>;

/** Where the agent's /logs/artifacts is kept on the host while the sandboxes change hands. */
const LOGS_ARTIFACTS = "/logs/artifacts";

/**
 * A one-step task, after the agent and the artifacts' collection: the agent's output out of its
 * sandbox, that sandbox stopped, `verify` run in a fresh one. Sets state.verifier and the timing of
 * `verifier_environment_setup` and `verifier`.
 */
export async function runSeparateVerifier(
  plan: RolloutPlan,
  state: RolloutState,
  rolloutDir: string,
  verify: VerifierRunner,
): Promise<void> {
  state.verifier = await verifyApart(plan, state.sandbox as Sandbox, verify, state.timing, {
    lastUse: true,
    rolloutDir,
    artifactsDir: path.join(rolloutDir, "artifacts"),
  });
}

/**
 * One step of a multi-step task: its output (the workspace, the task's artifacts as they are now,
 * /logs/artifacts) into a fresh sandbox where `verify` runs; the agent's sandbox stays for the next
 * step. Records `verifier_environment_setup` in the step's timing.
 */
export async function verifyStepApart(
  plan: RolloutPlan,
  agentSandbox: Sandbox,
  verify: VerifierRunner,
  timing: Record<string, number>,
): Promise<VerifierOutcome> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-step-artifacts-"));
  try {
    await collectArtifacts(agentSandbox, plan.task.config.artifacts, scratch);
    return await verifyApart(plan, agentSandbox, verify, timing, {
      lastUse: false,
      artifactsDir: path.join(scratch, "artifacts"),
    });
  } finally {
    await fs.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

interface ApartOptions {
  /** The agent's sandbox is not used again: its logs are copied to the rollout and it is stopped. */
  lastUse: boolean;
  /** Required with lastUse: where the agent's logs go. */
  rolloutDir?: string;
  /** The collected artifacts: each at its `destination` under this folder. */
  artifactsDir: string;
}

async function verifyApart(
  plan: RolloutPlan,
  agentSandbox: Sandbox,
  verify: VerifierRunner,
  timing: Record<string, number> | TimingInfo,
  options: ApartOptions,
): Promise<VerifierOutcome> {
  if (path.posix.resolve(agentSandbox.workdir) === "/") {
    // The workspace would be the whole filesystem: emptying it would empty the verifier's sandbox.
    throw new CategorizedError(
      "task_error",
      `task ${plan.task.name}: a separate verifier needs a workspace folder, but the workdir is /; set WORKDIR (or [environment] workdir) to a folder, or keep the verifier shared`,
    );
  }
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-verifier-input-"));
  let fresh: Sandbox | null = null;
  try {
    fresh = await timed(timing, "verifier_environment_setup", async () => {
      const output = await takeOutput(
        plan,
        agentSandbox,
        scratch,
        options.lastUse ? options.rolloutDir : undefined,
      );
      // Removed while the verifier's sandbox starts, and awaited: runRollout's last copy out of the
      // agent's sandbox must find it gone, not half removed (runRollout's own stop is then a no-op).
      const agentGone = options.lastUse ? agentSandbox.stop().catch(() => undefined) : null;
      try {
        const sandbox = await startVerifierSandbox(plan);
        try {
          await readyEnvironment(sandbox, plan.task, plan.signal);
          await placeOutput(sandbox, output, plan, options.artifactsDir);
        } catch (err) {
          await release(plan, sandbox);
          throw err;
        }
        return sandbox;
      } finally {
        await agentGone;
      }
    });
    const sandbox = fresh;
    return await timed(timing, "verifier", () => verify(sandbox));
  } finally {
    if (fresh) await release(plan, fresh);
    await fs.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

interface AgentOutput {
  /** The agent sandbox's workdir, copied to the host. */
  workspace: string;
  /** Its /logs/artifacts, copied to the host (absent when it had none). */
  logsArtifacts: string;
}

/** The agent's output out of its sandbox, with its processes gone first so nothing changes it meanwhile. */
async function takeOutput(
  plan: RolloutPlan,
  sandbox: Sandbox,
  scratch: string,
  rolloutDir?: string,
): Promise<AgentOutput> {
  const output = {
    workspace: path.join(scratch, "workspace"),
    logsArtifacts: path.join(scratch, "logs-artifacts"),
  };
  try {
    await sandbox.killAgentProcesses();
    // Settles which limits the agent went past (recorded in config.json) before the sandbox goes.
    await sandbox.prepareVerifier?.();
    // The workspace is the agent's answer: its budget is the task's disk, not the logs' default.
    const maxBytes = Math.max(plan.task.config.sandbox.storageMb, 1) * 1024 * 1024;
    await sandbox.download(sandbox.workdir, output.workspace, { maxBytes });
    // What the copy left out is recorded in the rollout, never handed to the verifier as a workspace file.
    const cut = path.join(output.workspace, CUT_RECORD);
    if (await exists(cut)) {
      if (rolloutDir) await fs.copyFile(cut, path.join(rolloutDir, `workspace${CUT_RECORD}`));
      await fs.rm(cut);
    }
    await sandbox.download(LOGS_ARTIFACTS, output.logsArtifacts);
    if (rolloutDir) {
      // What runRollout's last step copies out of the agent's sandbox, copied now: it is about to go.
      await sandbox.download("/logs/agent", path.join(rolloutDir, "agent"));
      if (await exists(output.logsArtifacts))
        await copyTree(output.logsArtifacts, path.join(rolloutDir, "artifacts"));
    }
  } catch (err) {
    throw new CategorizedError(
      "infra_error",
      `copying the agent's output (${sandbox.workdir}, ${LOGS_ARTIFACTS}) out of its sandbox for the separate verifier failed: ${messageOf(err)}`,
      { cause: err },
    );
  }
  await fs.mkdir(output.workspace, { recursive: true });
  return output;
}

/** A sandbox from the task's spec, as the agent's was made, with the verifier's network as its baseline. */
async function startVerifierSandbox(plan: RolloutPlan): Promise<Sandbox> {
  if (plan.signal.aborted)
    throw new CategorizedError(
      "interrupted",
      "the run was interrupted before the verifier's sandbox started",
    );
  let sandbox: Sandbox;
  try {
    sandbox = await plan.run.backend.create({
      task: plan.task,
      jobName: plan.run.jobName,
      rolloutName: `${plan.rolloutName}-verifier`,
      network: phaseHasNetwork(plan.task, "verifier"),
      jobDir: plan.job.dir,
    });
  } catch (err) {
    const category = err instanceof CategorizedError ? err.category : "sandbox_setup";
    throw new CategorizedError(category, `the separate verifier's sandbox did not start: ${messageOf(err)}`, {
      cause: err,
    });
  }
  sayWarnings(plan, sandbox);
  return sandbox;
}

/** The workspace replaces the image's copy; each artifact goes back where the agent left it. */
async function placeOutput(sandbox: Sandbox, output: AgentOutput, plan: RolloutPlan, artifactsDir: string) {
  const step = async (what: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      throw new CategorizedError(
        "infra_error",
        `placing ${what} in the separate verifier's sandbox failed: ${messageOf(err)}`,
        { cause: err },
      );
    }
  };
  const workdir = sandbox.workdir;
  await step(`the workspace (${workdir})`, async () => {
    const r = await sandbox.exec(`mkdir -p ${q(workdir)} && find ${q(workdir)} -mindepth 1 -delete`, {
      user: "root",
      cwd: "/",
    });
    if (r.exitCode !== 0)
      throw new Error(`emptying it exited ${r.exitCode}: ${(r.stderr || r.stdout).trim()}`);
    await sandbox.upload(output.workspace, workdir);
    // Owned as the image's workspace is (the agent user's, or root's): as the agent left it.
    await sandbox.exec(`chown -R "$(stat -c %u:%g ${q(workdir)})" ${q(workdir)} 2>/dev/null || true`, {
      user: "root",
      cwd: "/",
    });
  });
  // Collected (and pruned of its excludes) by collectArtifacts: only what the task declared.
  for (const spec of plan.task.config.artifacts) {
    const kept = path.join(artifactsDir, spec.destination);
    if (!(await exists(kept))) continue;
    await step(`the artifact ${spec.source}`, () => sandbox.upload(kept, spec.source));
  }
  if (await exists(output.logsArtifacts)) {
    await step(LOGS_ARTIFACTS, () => sandbox.upload(output.logsArtifacts, LOGS_ARTIFACTS));
  }
}

/** Stopping is not on the rollout's path: the job awaits it before it ends (as runRollout does). */
async function release(plan: RolloutPlan, sandbox: Sandbox): Promise<void> {
  const stopping = sandbox.stop().catch(() => undefined);
  if (plan.deferCleanup) plan.deferCleanup(stopping);
  else await stopping;
}

async function timed<T>(
  timing: Record<string, number> | TimingInfo,
  name: string,
  work: () => Promise<T>,
): Promise<T> {
  const t0 = Date.now();
  try {
    return await work();
  } finally {
    (timing as Record<string, number>)[name] = Math.round(Date.now() - t0) / 1000;
  }
}

async function exists(p: string): Promise<boolean> {
  return (await fs.lstat(p).catch(() => null)) !== null;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
